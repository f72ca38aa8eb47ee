/**
 * A worker thread of `memlens run`'s pool: decodes the snapshots of each batch it is sent, one
 * after the other (decode-cell.ts), and posts back each one's outcome, content hash and stat key.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type CellOutcome, isCellOutcome } from '../cache/cell-outcome.js';
import { ResultCache } from '../cache/result-cache.js';
import { type CellDone, type CellJob, decodeCell } from './decode-cell.js';
import type { PoolMessage } from './worker-pool.js';

export interface CellWorkerData {
  /** The memlens version whose cache entries are read, or null without a cache. */
  cacheVersion: string | null;
}

const { cacheVersion } = workerData as CellWorkerData;
const ctx = {
  cache: cacheVersion === null ? null : new ResultCache<CellOutcome>(cacheVersion, isCellOutcome),
  progress: false,
};

parentPort!.on('message', async ({ batch, items }: PoolMessage<CellJob>) => {
  const replies: CellDone[] = [];
  for (const job of items) replies.push(await decodeCell(job, ctx));
  parentPort!.postMessage({ batch, items: replies } satisfies PoolMessage<CellDone>);
});
