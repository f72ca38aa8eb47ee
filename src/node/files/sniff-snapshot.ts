import fs from 'node:fs';
import zlib from 'node:zlib';
import { notSnapshotJson } from '../../engine/run-layout/index.js';

/** Enough of a file to see its first keys, however the JSON is indented. */
const HEAD_BYTES = 64 * 1024;

/**
 * Why a JSON file found in a run is not a snapshot (notSnapshotJson on its head, gzipped or not),
 * or null when it may be one. Pickles are left to the decoder, which names what is wrong with one.
 */
export function notSnapshotReason(file: string): string | null {
  if (!isJsonName(file)) return null;
  let head: string;
  try {
    head = headText(file);
  } catch {
    return null; // unreadable: the decoder's one-line error names it
  }
  return notSnapshotJson(file, head);
}

/** The files notSnapshotReason reads (the others it answers from their name alone). */
export function isJsonName(file: string): boolean {
  return /\.json(\.gz)?$/i.test(file);
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
