/** The keys a JSON snapshot opens with (a dict), or that each segment of a bare segment list has. */
const SNAPSHOT_KEYS = /"(segments|device_traces|total_size|allocated_size)"\s*:/;

/**
 * Why a JSON file found beside a run's snapshots is not one, from the head of its text (64 KiB is
 * plenty), or null when it may be one. Run folders hold JSON of every kind (training configs,
 * tokenizers, the profiler's Chrome traces: composer's `rank<R>.<batch>.pt.trace.json`,
 * torchtitan's `rank<R>_trace.json.gz`, lmms-engine's `prof_start_<a>_end_<b>_rank_<R>.json`).
 */
export function notSnapshotJson(name: string, head: string): string | null {
  const text = head.replace(/^\uFEFF?\s*/, '');
  if (SNAPSHOT_KEYS.test(text) || /^\[\s*(\]|$)/.test(text)) return null;
  if (/"traceEvents"\s*:/.test(text) || /\.pt\.trace\.json/i.test(name))
    return 'a Chrome trace (profiler), not a snapshot';
  return 'JSON without segments or device_traces (a config, a tokenizer, a log), not a snapshot';
}
