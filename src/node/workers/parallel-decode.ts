import type { DiffSide } from '../../engine/analyses/diff/index.js';
import { fileSize } from '../files/read-file.js';
import { runWorker } from './worker-pool.js';

export interface SideRequest {
  file: string;
  device?: number;
  fullStacks: boolean;
}

/** What the worker posts: progress (bytes read) any number of times, then the side or an error. */
export type SideReply = { progress: number } | { side: DiffSide } | { error: string };

const WORKER = new URL('./diff-side-worker.js', import.meta.url);

/**
 * Each file's half of a diff, decoded on its own worker thread: decoding is the cost of a diff,
 * and two files decode in about the time of one on two cores. `onProgress` gets the bytes read
 * of all files together, out of `total`.
 */
export async function diffSidesInParallel(
  requests: SideRequest[],
  onProgress: (bytes: number) => void,
): Promise<({ side: DiffSide } | { error: string })[]> {
  const read = requests.map(() => 0);
  const report = (k: number, bytes: number) => {
    read[k] = bytes;
    onProgress(read.reduce((x, y) => x + y, 0));
  };
  return Promise.all(requests.map((req, k) => sideInWorker(req, (bytes) => report(k, bytes))));
}

/** The files' sizes together, for a progress bar; 0 when one cannot be read (its error comes later). */
export async function totalSize(files: string[]): Promise<number> {
  try {
    const sizes = await Promise.all(files.map(fileSize));
    return sizes.reduce((x, y) => x + y, 0);
  } catch {
    return 0;
  }
}

function sideInWorker(
  req: SideRequest,
  onProgress: (bytes: number) => void,
): Promise<{ side: DiffSide } | { error: string }> {
  return runWorker<SideRequest, { side: DiffSide }>(WORKER, req, (message) => {
    if (typeof message !== 'object' || message === null || !('progress' in message)) return false;
    onProgress((message as { progress: number }).progress);
    return true;
  });
}
