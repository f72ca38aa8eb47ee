import fs from 'node:fs';
import zlib from 'node:zlib';

/** Enough of a file to see its first keys, however the JSON is indented. */
const HEAD_BYTES = 64 * 1024;

/** The keys a JSON snapshot opens with (a dict), or that each segment of a bare segment list has. */
const SNAPSHOT_KEYS = /"(segments|device_traces|total_size|allocated_size)"\s*:/;

/**
 * Why a JSON file found in a run is not a snapshot, or null when it may be one. Run folders hold
 * JSON of every kind beside the snapshots (training configs, tokenizers, the profiler's Chrome
 * traces: composer's `rank<R>.<batch>.pt.trace.json`, torchtitan's `rank<R>_trace.json.gz`,
 * lmms-engine's `prof_start_<a>_end_<b>_rank_<R>.json`); only the head of each is read. Pickles are
 * left to the decoder, which names what is wrong with one.
 */
export function notSnapshotReason(file: string): string | null {
  if (!/\.json(\.gz)?$/i.test(file)) return null;
  let head: string;
  try {
    head = headText(file);
  } catch {
    return null; // unreadable: the decoder's one-line error names it
  }
  const text = head.replace(/^\uFEFF?\s*/, '');
  if (SNAPSHOT_KEYS.test(text) || /^\[\s*(\]|$)/.test(text)) return null;
  if (/"traceEvents"\s*:/.test(text) || /\.pt\.trace\.json/i.test(file))
    return 'a Chrome trace (profiler), not a snapshot';
  return 'JSON without segments or device_traces (a config, a tokenizer, a log), not a snapshot';
}

function headText(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = fs.readSync(fd, buf, 0, HEAD_BYTES, 0);
    const bytes = buf.subarray(0, n);
    const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
    // A gzip stream cut short: what it inflates to so far is enough. A sixteenth of the head
    // compressed bounds what it can inflate to (about 1000:1 at most) to a few MiB.
    const plain = gzipped
      ? zlib.gunzipSync(bytes.subarray(0, HEAD_BYTES / 16), { finishFlush: zlib.constants.Z_SYNC_FLUSH })
      : bytes;
    return plain.subarray(0, HEAD_BYTES).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
