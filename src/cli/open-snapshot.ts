import { asSnapshotError } from '../engine/errors.js';
import { loadSnapshot } from '../engine/load.js';
import type { Snapshot } from '../engine/model/snapshot.js';
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
  const bar = progressFor(path, size, opts.progress);
  try {
    return await loadSnapshot(readChunks(path), {
      sizeHint: size,
      onProgress: (n) => {
        bar.update(n);
        opts.onProgress?.(n);
      },
    });
  } catch (e) {
    throw asSnapshotError(e);
  } finally {
    bar.stop();
  }
}
