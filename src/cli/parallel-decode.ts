import { Worker } from 'node:worker_threads';
import type { DiffSide } from '../engine/analyses/diff/diff-side.js';
import { fileSize } from './read-file.js';

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
  return new Promise((resolve) => {
    const worker = new Worker(WORKER, { workerData: req });
    let done = false;
    const finish = (reply: { side: DiffSide } | { error: string }) => {
      if (done) return;
      done = true;
      // The worker has nothing left to do; ending it now frees its model's memory at once.
      void worker.terminate();
      resolve(reply);
    };
    worker.on('message', (reply: SideReply) => {
      if ('progress' in reply) onProgress(reply.progress);
      else finish(reply);
    });
    worker.on('error', (e) => finish({ error: `could not be read: ${e.message.split('\n')[0]}` }));
    worker.on('exit', (code) =>
      finish({ error: `could not be read (the decoding thread exited with code ${code})` }),
    );
  });
}
