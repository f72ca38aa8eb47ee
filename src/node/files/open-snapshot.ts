import { asSnapshotError } from '../../engine/base/index.js';
import { loadSnapshot } from '../../engine/load/index.js';
import type { Snapshot } from '../../engine/model/index.js';
import { progressFor } from './progress.js';
import { fileSize, readChunks } from './read-file.js';

export interface OpenOptions {
  progress: boolean;
  /** Bytes read so far, as they are read (for a caller that shows progress elsewhere). */
  onProgress?: (bytes: number) => void;
}

/** Loads one snapshot file. Every failure becomes a SnapshotError with a one-line message. */
export async function openSnapshot(path: string, opts: OpenOptions): Promise<Snapshot> {
  const size = await fileSize(path);
  return decodeChunks(path, size, readChunks(path), opts);
}

/** Loads a snapshot from chunks of `path` the caller reads (of `size` bytes, for the progress bar). */
export async function decodeChunks(
  path: string,
  size: number,
  chunks: AsyncIterable<Uint8Array>,
  opts: OpenOptions,
): Promise<Snapshot> {
  const bar = progressFor(path, size, opts.progress);
  try {
    return await loadSnapshot(chunks, {
      sizeHint: size,
      onProgress: (n) => {
        bar.update(n);
        opts.onProgress?.(n);
      },
    });
  } catch (e) {
    const error = asSnapshotError(e);
    // Marks memlens's own failures (memory, bugs): they say nothing lasting about the file.
    if (error !== e) error.cause = e;
    throw error;
  } finally {
    bar.stop();
  }
}
