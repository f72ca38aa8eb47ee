import { SnapshotError } from '../engine/errors.js';
import { loadSnapshot } from '../engine/load.js';
import type { Snapshot } from '../engine/model/snapshot.js';
import { progressFor } from './progress.js';
import { fileSize, readChunks } from './read-file.js';

export interface OpenOptions {
  progress: boolean;
}

/** Loads one snapshot file. Every failure becomes a SnapshotError with a one-line message. */
export async function openSnapshot(path: string, opts: OpenOptions): Promise<Snapshot> {
  const size = await fileSize(path);
  const bar = progressFor(path, size, opts.progress);
  try {
    return await loadSnapshot(readChunks(path), { sizeHint: size, onProgress: (n) => bar.update(n) });
  } catch (e) {
    throw asOneLine(e);
  } finally {
    bar.stop();
  }
}

/** Anything but a SnapshotError here is memlens failing on odd input: still one line, still exit 2. */
function asOneLine(e: unknown): SnapshotError {
  if (e instanceof SnapshotError) return e;
  if (e instanceof RangeError)
    return new SnapshotError(`input too large or malformed for memlens (${e.message})`);
  const message = e instanceof Error ? e.message : String(e);
  return new SnapshotError(`memlens failed to read this file (internal error, please report): ${message}`);
}
