/**
 * Every snapshot of a run decoded to what the run needs of it (cell-result.ts): from the result
 * cache when the file is unchanged, else on worker threads. Shared by `memlens run` and the
 * view server (`memlens view DIR`), so both reopen a run instantly.
 */
import fs from 'node:fs';
import { type CellResult, cellResult } from '../engine/analyses/run/cell-result.js';
import type { RunSnapshot } from '../engine/analyses/run/run-table.js';
import type { Run } from '../engine/run/discover.js';
import type { CellReply, CellRequest } from './cell-worker.js';
import { openSnapshot } from './open-snapshot.js';
import { contentHash, ResultCache } from './result-cache.js';
import { VERSION } from './version.js';
import { runPool } from './worker-pool.js';

export interface DecodeRunOptions {
  jobs?: number;
  /** Read and write the result cache. */
  cache: boolean;
  /** Called as each file is done (from the cache or decoded), with how many are done of how many. */
  onDone?: (done: number, total: number) => void;
  /** Whether the progress line is drawn on stderr (a terminal only). */
  progress?: boolean;
  /** Called with each snapshot as its result (or error) is known, cached ones first. */
  onResult?: (s: RunSnapshot) => void;
}

const WORKER = new URL('./cell-worker.js', import.meta.url);

export async function decodeRun(run: Run, opts: DecodeRunOptions): Promise<RunSnapshot[]> {
  const cache = opts.cache ? new ResultCache<CellResult>(VERSION) : null;
  const out: RunSnapshot[] = run.cells.map((cell) => ({ cell, result: null }));
  const jobs: { index: number; request: CellRequest; bytes: number }[] = [];
  out.forEach((s, index) => {
    const hash = cache?.knownHash(s.cell.path);
    const cached = hash === undefined ? undefined : cache?.get(hash);
    if (cached !== undefined) s.result = cached;
    else jobs.push({ index, request: { file: s.cell.path, hash }, bytes: sizeOf(s.cell.path) });
  });
  let done = out.length - jobs.length;
  for (const s of out) if (s.result !== null) opts.onResult?.(s);
  opts.onDone?.(done, out.length);
  const line = opts.progress === false ? () => {} : progressLine(jobs.length);
  const finished = (s: RunSnapshot) => {
    line();
    opts.onResult?.(s);
    opts.onDone?.(++done, out.length);
  };
  if (jobs.length === 1) {
    // One file: decoding it here spares starting a thread.
    await decodeHere(out[jobs[0]!.index]!, cache);
    finished(out[jobs[0]!.index]!);
  } else {
    await runPool<CellRequest, CellReply>(
      WORKER,
      jobs,
      (k, reply) => {
        const s = out[jobs[k]!.index]!;
        if ('result' in reply) {
          s.result = reply.result;
          cache?.put(s.cell.path, reply.hash, reply.result);
        } else {
          s.error = reply.error;
          process.stderr.write(`memlens: ${s.cell.path}: ${reply.error}\n`);
        }
        finished(s);
      },
      { jobs: opts.jobs },
    );
  }
  cache?.close();
  return out;
}

async function decodeHere(s: RunSnapshot, cache: ResultCache<CellResult> | null): Promise<void> {
  try {
    s.result = cellResult(await openSnapshot(s.cell.path, { progress: true }));
    if (cache) cache.put(s.cell.path, await contentHash(s.cell.path), s.result);
  } catch (e) {
    s.error = e instanceof Error ? e.message.split('\n')[0]! : String(e);
    process.stderr.write(`memlens: ${s.cell.path}: ${s.error}\n`);
  }
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** "decoded 12 / 64 files" on stderr while a person watches. */
function progressLine(total: number): () => void {
  let done = 0;
  if (!process.stderr.isTTY || total < 2) return () => {};
  return () => {
    done++;
    process.stderr.write(done === total ? '\r\x1b[K' : `\rdecoded ${done} / ${total} files`);
  };
}
