/**
 * Every snapshot of a run decoded to what the run needs of it (cell-result.ts): from the result
 * cache when the file is known, else on a fixed pool of worker threads. Shared by `memlens run`
 * and the view server (`memlens view DIR`), so both reopen a run instantly.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { RunSnapshot } from '../../engine/analyses/run/index.js';
import type { Run } from '../../engine/run-layout/index.js';
import { type CellOutcome, isCellOutcome } from '../cache/cell-outcome.js';
import { ALWAYS_HASHED_BYTES, type CacheLookup, ResultCache } from '../cache/result-cache.js';
import { VERSION } from '../version.js';
import type { CellWorkerData } from './cell-worker.js';
import { type CellDone, type CellJob, decodeCell } from './decode-cell.js';
import { runPool } from './worker-pool.js';

export interface DecodeRunOptions {
  jobs?: number;
  /** Read and write the result cache. */
  cache: boolean;
  /** Look every file up by its content, never by its size, mtime and inode alone. */
  verifyCache?: boolean;
  /** Called as each file is done (from the cache or decoded), with how many are done of how many. */
  onDone?: (done: number, total: number) => void;
  /** Whether the progress line is drawn on stderr (a terminal only). */
  progress?: boolean;
  /** Called with each snapshot as its result (or error) is known, cached ones first. */
  onResult?: (s: RunSnapshot) => void;
  /**
   * Decode on this thread too, as one of the pool: for a command with nothing else to do
   * meanwhile (not a server, whose requests would wait).
   */
  hereToo?: boolean;
}

const WORKER = new URL('./cell-worker.js', import.meta.url);

/** Files up to this size travel to the pool in batches: a message per file would cost more than the file. */
const BATCHED_BYTES = 1024 * 1024;
const MAX_BATCH = 64;

export async function decodeRun(run: Run, opts: DecodeRunOptions): Promise<RunSnapshot[]> {
  const cache = opts.cache ? new ResultCache<CellOutcome>(VERSION, isCellOutcome) : null;
  const out: RunSnapshot[] = run.cells.map((cell) => ({ cell, result: null }));
  const doubts: string[] = [];
  const pending: { index: number; size: number }[] = [];
  out.forEach((s, index) => {
    const size = sizeOf(s.cell.path);
    const found =
      cache !== null && !opts.verifyCache && size > ALWAYS_HASHED_BYTES ? indexed(cache, s) : undefined;
    if (found !== undefined && 'value' in found) settle(s, found.value);
    else {
      if (found !== undefined) doubts.push(`${s.cell.path}: ${found.doubt}`);
      pending.push({ index, size });
    }
  });
  let done = out.length - pending.length;
  for (const s of out) if (s.result !== null || s.error !== undefined) opts.onResult?.(s);
  opts.onDone?.(done, out.length);
  const line = opts.progress === false ? () => {} : progressLine(pending.length);
  const record = (index: number, cell: CellDone) => {
    const s = out[index]!;
    if (cell.doubt !== undefined) doubts.push(`${s.cell.path}: ${cell.doubt}`);
    if (cache !== null && cell.hash !== undefined) {
      if (!cell.cached) cache.put(cell.hash, cell.outcome);
      if (cell.key !== undefined) cache.remember(cell.key, cell.hash);
    }
    settle(s, cell.outcome);
    line();
    opts.onResult?.(s);
    opts.onDone?.(++done, out.length);
  };
  const job = (index: number): CellJob => ({
    file: out[index]!.cell.path,
    verify: opts.verifyCache === true,
  });
  if (pending.length === 1) {
    // One file: decoding it here spares starting a thread.
    const { index } = pending[0]!;
    record(index, await decodeCell(job(index), { cache, progress: opts.progress !== false }));
  } else {
    const batches = batchesOf(pending, workersFor(opts.jobs));
    await runPool<CellJob, CellDone>(
      WORKER,
      { cacheVersion: cache === null ? null : VERSION } satisfies CellWorkerData,
      batches.map((b) => ({ requests: b.indexes.map(job), bytes: b.bytes })),
      (k, replies) => {
        for (const [i, r] of replies.entries())
          record(batches[k]!.indexes[i]!, 'outcome' in r ? r : { outcome: r, cached: false });
      },
      { jobs: opts.jobs, local: opts.hereToo ? (jobs) => decodeHere(jobs, cache) : undefined },
    );
  }
  cache?.close();
  if (doubts.length > 0) process.stderr.write(`memlens: ${doubtLine(doubts)}\n`);
  return out;
}

async function decodeHere(jobs: CellJob[], cache: ResultCache<CellOutcome> | null): Promise<CellDone[]> {
  const done: CellDone[] = [];
  for (const job of jobs) done.push(await decodeCell(job, { cache, progress: false }));
  return done;
}

/** The cached outcome of a large file whose size, mtime and inode the index knows. */
function indexed(cache: ResultCache<CellOutcome>, s: RunSnapshot): CacheLookup<CellOutcome> {
  const hash = cache.knownHash(s.cell.path);
  return hash === undefined ? undefined : cache.get(hash);
}

/** A failure is said on every run, cached or not. */
function settle(s: RunSnapshot, outcome: CellOutcome): void {
  if ('result' in outcome) {
    s.result = outcome.result;
    return;
  }
  s.error = outcome.error;
  process.stderr.write(`memlens: ${s.cell.path}: ${outcome.error}\n`);
}

function doubtLine(doubts: string[]): string {
  const more = doubts.length > 1 ? ` (and ${doubts.length - 1} more)` : '';
  const entries = doubts.length === 1 ? 'entry' : 'entries';
  return `cache: ${doubts.length} ${entries} not trusted, decoded again: ${doubts[0]}${more}`;
}

function workersFor(jobs: number | undefined): number {
  return Math.max(1, jobs ?? os.availableParallelism());
}

/**
 * Large files one per batch, largest first (a large file taken last would keep one thread busy
 * while the others wait); then small ones together, in batches small enough that every worker
 * gets several (the last batches then end about together) and at most MAX_BATCH files.
 */
function batchesOf(
  pending: { index: number; size: number }[],
  workers: number,
): { indexes: number[]; bytes: number }[] {
  const small = pending.filter((p) => p.size <= BATCHED_BYTES);
  const per = Math.min(MAX_BATCH, Math.max(1, Math.ceil(small.length / (workers * 4))));
  const batches = pending
    .filter((p) => p.size > BATCHED_BYTES)
    .sort((a, b) => b.size - a.size)
    .map((p) => ({ indexes: [p.index], bytes: p.size }));
  for (let i = 0; i < small.length; i += per) {
    const group = small.slice(i, i + per);
    batches.push({ indexes: group.map((p) => p.index), bytes: Math.max(...group.map((p) => p.size)) });
  }
  return batches;
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
