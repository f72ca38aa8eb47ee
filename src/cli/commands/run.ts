import fs from 'node:fs';
import type { Command } from 'commander';
import { type CellResult, cellResult } from '../../engine/analyses/run/cell-result.js';
import { type RunReport, runReport } from '../../engine/analyses/run/run-report.js';
import type { RunSnapshot } from '../../engine/analyses/run/run-table.js';
import { discoverRun, type Run } from '../../engine/run/discover.js';
import type { CellReply, CellRequest } from '../cell-worker.js';
import { expandPaths } from '../expand-paths.js';
import { openSnapshot } from '../open-snapshot.js';
import { contentHash, ResultCache } from '../result-cache.js';
import { EXIT_BAD_INPUT, parseCount } from '../run-files.js';
import { VERSION } from '../version.js';
import { runPool } from '../worker-pool.js';
import { renderRun } from './run-text.js';

interface RunCliOptions {
  jobs?: number;
  cache: boolean;
  json?: boolean;
}

const WORKER = new URL('../cell-worker.js', import.meta.url);

/** `memlens run`: a training run at a glance (ranks × steps), what stands out, what grows, its OOMs. */
export function runCommand(program: Command): void {
  program
    .command('run')
    .description(
      'a training run at a glance: ranks x steps, the cells that stand out, the sites that grow, every OOM',
    )
    .argument(
      '<dir...>',
      'run directories (verl, torchtitan, composer, ... layouts), or snapshot files of one run',
    )
    .option('--jobs <n>', 'decode at most n files at once (default: the number of cores)', parseCount)
    .option('--no-cache', 'decode every file: neither read nor write the result cache (~/.cache/memlens)')
    .option(
      '--json',
      'print JSON: {"runs": [{"root", "layout", "snapshots": [{"file", "step", "rank", "pid", "kind", "devices"}], "outliers", "growth", "ooms"}]}',
    )
    .action(async (args: string[], opts: RunCliOptions) => {
      const reports: RunReport[] = [];
      for (const { root, run } of runsOf(args)) {
        const snapshots = await decodeRun(run, opts);
        const report = runReport(root, run, snapshots);
        if (opts.json) reports.push(report);
        else process.stdout.write(`${renderRun(report, process.stdout.columns || 100)}\n`);
        if (snapshots.some((s) => s.result === null)) process.exitCode = EXIT_BAD_INPUT;
      }
      if (opts.json) process.stdout.write(`${JSON.stringify({ runs: reports.map(jsonRun) }, null, 1)}\n`);
    });
}

/** Each directory is a run; snapshot files named on their own make one run together. */
function runsOf(args: string[]): { root: string; run: Run }[] {
  const dirs = args.filter(isDirectory);
  const files = args.filter((a) => !isDirectory(a));
  const runs = expandPaths(dirs).runs;
  if (files.length > 0) runs.push({ root: '.', run: discoverRun(files) });
  return runs;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Every cell's result: from the cache when the file is unchanged, else decoded on worker threads. */
async function decodeRun(run: Run, opts: RunCliOptions): Promise<RunSnapshot[]> {
  const cache = opts.cache ? new ResultCache<CellResult>(VERSION) : null;
  const out: RunSnapshot[] = run.cells.map((cell) => ({ cell, result: null }));
  const jobs: { index: number; request: CellRequest; bytes: number }[] = [];
  out.forEach((s, index) => {
    const hash = cache?.knownHash(s.cell.path);
    const cached = hash === undefined ? undefined : cache?.get(hash);
    if (cached !== undefined) s.result = cached;
    else jobs.push({ index, request: { file: s.cell.path, hash }, bytes: sizeOf(s.cell.path) });
  });
  const progress = progressLine(jobs.length);
  if (jobs.length === 1) {
    // One file: decoding it here spares starting a thread.
    await decodeHere(out[jobs[0]!.index]!, cache);
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
        progress();
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

/** The documented JSON: the table's rows are the snapshots' own figures, so they are left out. */
function jsonRun(r: RunReport) {
  const { rows: _rows, ...rest } = r;
  return rest;
}
