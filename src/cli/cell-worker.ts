/**
 * Worker thread of `memlens run`: decodes one snapshot and posts back what the run needs of it
 * (cell-result.ts) and the file's content hash for the result cache.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type CellResult, cellResult } from '../engine/analyses/run/cell-result.js';
import { openSnapshot } from './open-snapshot.js';
import { contentHash } from './result-cache.js';

export interface CellRequest {
  file: string;
  /** Known already (the cache's index); else the worker hashes the file after decoding it. */
  hash?: string;
}

export type CellReply = { result: CellResult; hash: string } | { error: string };

async function main(req: CellRequest): Promise<CellReply> {
  try {
    const snapshot = await openSnapshot(req.file, { progress: false });
    const result = cellResult(snapshot);
    // Hashed after decoding: the file is in the page cache by then.
    return { result, hash: req.hash ?? (await contentHash(req.file)) };
  } catch (e) {
    return { error: e instanceof Error ? e.message.split('\n')[0]! : String(e) };
  }
}

parentPort!.postMessage(await main(workerData as CellRequest));
