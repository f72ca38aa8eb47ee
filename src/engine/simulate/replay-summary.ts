/** The figures a simulated run is judged by, side by side with other runs. */
import { formatCount } from '../base/format.js';
import type { Replay } from './replay.js';
import { describeSettings, type SimSettings } from './settings.js';

export interface ReplaySummary {
  /** The settings as a PYTORCH_CUDA_ALLOC_CONF string ('' = all defaults). */
  settings: string;
  peak_reserved_bytes: number;
  /** Block bytes (rounded sizes), as torch.cuda.max_memory_allocated() counts them. */
  peak_allocated_bytes: number;
  /** Requested bytes, as the trace's allocated curve counts them. */
  peak_requested_bytes: number;
  /**
   * Reserved minus allocated block bytes when allocated memory first peaked: what the cache held
   * unused when the program needed the most (not where reserved peaked: on a warm cache that is
   * the first entry, before the program allocated anything).
   */
  fragmentation_at_peak_bytes: number;
  /** Of the memory reserved at that moment. */
  fragmentation_at_peak_percent: number;
  /** Reserved minus allocated when the first OOM was raised; null without one. */
  fragmentation_at_oom_bytes: number | null;
  /** Trace entries of the device. */
  trace_entries: number;
  /** Entries replayed before the first OOM (all of them without one): how far the run got. */
  completed_entries: number;
  /** Peak reserved over the completed entries: what runs that got equally far are compared by. */
  peak_reserved_completed_bytes: number;
  /** cudaMalloc calls and expandable page maps (num_device_alloc). */
  cuda_malloc_calls: number;
  /** cudaFree calls and expandable page unmaps (num_device_free). */
  cuda_free_calls: number;
  alloc_retries: number;
  oom: boolean;
  ooms: number;
  first_oom_entry: number;
  /** Requests that failed in the recording (`oom`) and fit in this run. */
  recorded_ooms_avoided: number;
  final_reserved_bytes: number;
}

export function summarizeReplay(settings: SimSettings, r: Replay): ReplaySummary {
  const st = r.allocator.stats;
  const frag = st.reservedAtPeakAllocated - st.peakAllocated;
  return {
    settings: describeSettings(settings),
    peak_reserved_bytes: st.peakReserved,
    peak_allocated_bytes: st.peakAllocated,
    peak_requested_bytes: st.peakRequested,
    fragmentation_at_peak_bytes: frag,
    fragmentation_at_peak_percent:
      st.reservedAtPeakAllocated > 0 ? round1((100 * frag) / st.reservedAtPeakAllocated) : 0,
    fragmentation_at_oom_bytes: st.firstOomEntry < 0 ? null : st.reservedAtOom - st.allocatedAtOom,
    trace_entries: r.entries,
    completed_entries: st.firstOomEntry < 0 ? r.entries : st.firstOomEntry,
    peak_reserved_completed_bytes: st.peakReservedBeforeOom,
    cuda_malloc_calls: st.deviceAllocs,
    cuda_free_calls: st.deviceFrees,
    alloc_retries: st.retries,
    oom: st.ooms > 0,
    ooms: st.ooms,
    first_oom_entry: st.firstOomEntry,
    recorded_ooms_avoided: r.oomsAvoided,
    final_reserved_bytes: st.reserved,
  };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/**
 * Best first, by outcome before figures: runs without an OOM, then the OOM that came latest (a
 * run that died before the big requests has a low peak that means nothing). Runs that got
 * equally far are compared over the same entries: lowest peak reserved, then fewest OOMs, then
 * fewest cudaMalloc calls.
 */
export function rankReplays(runs: ReplaySummary[]): ReplaySummary[] {
  return [...runs].sort(
    (x, y) =>
      y.completed_entries - x.completed_entries ||
      x.peak_reserved_completed_bytes - y.peak_reserved_completed_bytes ||
      x.ooms - y.ooms ||
      x.cuda_malloc_calls - y.cuda_malloc_calls,
  );
}

/** How far a run got, as the CLI and the web sweep print it: all entries, or where it first failed. */
export function howFar(r: ReplaySummary): string {
  if (r.trace_entries === 0) return 'no trace (dump only)';
  return r.oom
    ? `OOM at ${formatCount(r.first_oom_entry)} of ${formatCount(r.trace_entries)}`
    : `all ${formatCount(r.trace_entries)}`;
}
