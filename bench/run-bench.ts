/**
 * `memlens run` on a whole training run: many ranks' snapshots decoded on worker threads, then
 * reopened from the result cache. Targets (issue 14): aggregate decode at least 1.5x one file's
 * rate, peak RSS at most 2 GB whatever the run's size, and a cached reopen under a second.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { ROOT, TOOLS } from './cached-snapshot.js';

interface CliMeasurement {
  ms: number;
  maxRssBytes: number;
  exitCode: number;
}

/** A verl-layout run of `ranks` snapshots of about `size` each (one per rank, seeds differ), cached. */
export function cachedRun(ranks: number, size: string): string {
  const dir = join(ROOT, 'bench', 'cache', `run-${ranks}x${size}-v1`);
  for (let r = 0; r < ranks; r++) {
    const file = join(dir, 'step1', `torch_memory_rank${r}_pid${40_000 + r}.pickle`);
    if (existsSync(file)) continue;
    mkdirSync(join(dir, 'step1'), { recursive: true });
    process.stderr.write(`generating ${file} ...\n`);
    const tmp = `${file}.partial`;
    execFileSync(
      process.execPath,
      [
        join(TOOLS, 'scripts', 'generate.js'),
        '--out',
        tmp,
        '--size',
        size,
        '--seed',
        String(r + 1),
        '--quiet',
      ],
      { stdio: 'inherit' },
    );
    renameSync(tmp, file);
  }
  return dir;
}

/** The snapshots of a run cachedRun wrote, in rank order. */
export function runFiles(dir: string): string[] {
  const step = join(dir, 'step1');
  return readdirSync(step)
    .filter((n) => n.endsWith('.pickle'))
    .map((n) => ({ n, rank: Number(/rank(\d+)/.exec(n)?.[1]) }))
    .sort((a, b) => a.rank - b.rank)
    .map(({ n }) => join(step, n));
}

export function measureCli(args: string[], env: NodeJS.ProcessEnv): CliMeasurement {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-bench-run-'));
  const result = join(dir, 'result.json');
  try {
    const run = spawnSync(
      process.execPath,
      [...NODE_FLAGS, join(TOOLS, 'bench', 'measure.js'), 'cli', result, ...args],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env,
      },
    );
    if (run.error) throw run.error;
    return JSON.parse(readFileSync(result, 'utf8')) as CliMeasurement;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function dirBytes(dir: string): number {
  let total = 0;
  const files = execFileSync('find', [dir, '-name', '*.pickle', '-type', 'f'], { encoding: 'utf8' }).split(
    '\n',
  );
  for (const f of files) if (f) total += statSync(f).size;
  return total;
}

const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;

/** Prints the run benchmark as a Markdown table. */
export function benchRun(spec: string): void {
  const m = /^(\d+)x(\w+)$/.exec(spec);
  if (m === null) throw new Error(`--run takes RANKSxSIZE (64x100MB), not ${spec}`);
  const dir = cachedRun(Number(m[1]), m[2]!);
  const bytes = dirBytes(dir);
  const cacheHome = mkdtempSync(join(tmpdir(), 'memlens-bench-cache-'));
  const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
  try {
    const one = measureCli(['summary', join(dir, 'step1', 'torch_memory_rank0_pid40000.pickle')], env);
    const oneSize = statSync(join(dir, 'step1', 'torch_memory_rank0_pid40000.pickle')).size;
    const cold = measureCli(['run', dir, '--json'], env);
    const warm = measureCli(['run', dir, '--json'], env);
    const rate = (b: number, ms: number) => (b / 1e6 / (ms / 1000)).toFixed(0);
    console.log(`\n### memlens run: ${m[1]} ranks x ${m[2]} (${gb(bytes)}), verl layout\n`);
    console.log('| what | wall | aggregate MB/s | peak RSS | exit |');
    console.log('|---|---|---|---|---|');
    const row = (what: string, x: CliMeasurement, b: number) =>
      console.log(
        `| ${what} | ${(x.ms / 1000).toFixed(2)} s | ${rate(b, x.ms)} | ${gb(x.maxRssBytes)} | ${x.exitCode} |`,
      );
    row('one file: summary', one, oneSize);
    row('cold open (empty cache): run --json', cold, bytes);
    row('cached reopen: run --json', warm, bytes);
    const ratio = Number(rate(bytes, cold.ms)) / Number(rate(oneSize, one.ms));
    console.log(
      `\naggregate / single-file rate: ${ratio.toFixed(2)}x (target >= 1.5x); cold peak RSS ${gb(cold.maxRssBytes)} (target <= 2 GB); cached reopen ${(warm.ms / 1000).toFixed(2)} s (target < 1 s)`,
    );
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
}
