/**
 * Issue 25's CLI rows, each a ratio taken in one run so it holds on a machine of any speed:
 * memlens and its yardstick alternate (A B A B …) after one warm-up each (page cache warm), and
 * the medians of wall time and of CPU time (user + sys) are compared; the machine is shared, so
 * CPU time says what wall time cannot. Peak RSS is the largest of the runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { cachedSnapshot, ROOT, TOOLS } from './cached-snapshot.js';
import { loadLine } from './machine.js';
import { cachedRun, runFiles } from './run-bench.js';

interface Sample {
  wallMs: number;
  cpuMs: number;
  maxRssBytes: number;
  /**
   * The least wall time the process could take on this machine's cores were they idle: its
   * busiest JS thread's own CPU time (usage-hook.ts), or its CPU time shared over every core if
   * more. Null where threads' CPU times are not known.
   */
  idleMs: number | null;
}

/** A command line to time: node with these arguments (the usage hook is preloaded into it). */
interface Timed {
  label: string;
  nodeArgs: readonly string[];
}

const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const HOOK = join(TOOLS, 'bench', 'usage-hook.js');
const PEER = join(ROOT, '..', 'shared', 'peer', 'memoryviz-bench.mjs');
const CORPUS = join(ROOT, '..', 'shared', 'corpus');
/** The analyses whose cost the issue weighs against `summary`'s. */
const ANALYSES = ['peak', 'leaks', 'gc', 'frag', 'oom', 'categories'] as const;

const memlens = (...args: string[]): Timed => ({
  label: `memlens ${args.map((a) => (a.includes('/') ? basename(a) : a)).join(' ')}`,
  nodeArgs: [...NODE_FLAGS, CLI, ...args],
});
const memoryViz = (file: string): Timed => ({
  label: `MemoryViz.js load path ${basename(file)}`,
  nodeArgs: ['--max-old-space-size=16000', PEER, file],
});

function once(t: Timed, scratch: string): Sample {
  const dir = mkdtempSync(join(scratch, 'usage-'));
  const usage = join(dir, 'usage.json');
  try {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--import', HOOK, ...t.nodeArgs], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, MEMLENS_BENCH_USAGE: usage },
    });
    const wallMs = performance.now() - t0;
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`${t.label}: exit ${r.status}`);
    const u = JSON.parse(readFileSync(usage, 'utf8')) as Omit<Sample, 'wallMs' | 'idleMs'> & {
      threadMs: number | null;
    };
    const thread = busiest(dir, u.threadMs);
    const idleMs = thread === null ? null : Math.max(thread, u.cpuMs / availableParallelism());
    return { wallMs, cpuMs: u.cpuMs, maxRssBytes: u.maxRssBytes, idleMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The largest of the main thread's and each worker thread's own CPU time. */
function busiest(dir: string, main: number | null): number | null {
  if (main === null) return null;
  const workers = readdirSync(dir)
    .filter((n) => n.startsWith('usage.json.thread-'))
    .map(
      (n) => (JSON.parse(readFileSync(join(dir, n), 'utf8')) as { threadMs: number | null }).threadMs ?? 0,
    );
  return Math.max(main, ...workers);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Pair {
  a: Sample[];
  b: Sample[];
}

/** A then B, `runs` times, after one untimed run of each. */
function alternate(a: Timed, b: Timed, runs: number, scratch: string): Pair {
  once(a, scratch);
  once(b, scratch);
  const out: Pair = { a: [], b: [] };
  for (let i = 0; i < runs; i++) {
    out.a.push(once(a, scratch));
    out.b.push(once(b, scratch));
  }
  return out;
}

const sec = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const peak = (xs: Sample[]): number => Math.max(...xs.map((x) => x.maxRssBytes));

/**
 * One row: memlens (A) against the yardstick (B). `faster`: the yardstick is the slower peer and
 * the ratio reads B/A ("× faster"); otherwise A/B ("× the yardstick's time").
 */
function row(
  measure: string,
  a: Timed,
  b: Timed,
  runs: number,
  scratch: string,
  target: string,
  faster = false,
  threads = false,
): string {
  const p = alternate(a, b, runs, scratch);
  const med = (xs: Sample[], f: (x: Sample) => number) => median(xs.map(f));
  const [wa, wb] = [med(p.a, (x) => x.wallMs), med(p.b, (x) => x.wallMs)];
  const [ca, cb] = [med(p.a, (x) => x.cpuMs), med(p.b, (x) => x.cpuMs)];
  const ratio = (x: number, y: number) => (faster ? speedup(y / x) : `${(x / y).toFixed(2)}×`);
  const cells = [
    measure,
    `${sec(wa)} vs ${sec(wb)}`,
    `**${ratio(wa, wb)}**`,
    `${sec(ca)} vs ${sec(cb)}`,
    `**${ratio(ca, cb)}**`,
  ];
  if (threads) {
    const known = [...p.a, ...p.b].every((x) => x.idleMs !== null);
    const [ta, tb] = [med(p.a, (x) => x.idleMs ?? 0), med(p.b, (x) => x.idleMs ?? 0)];
    cells.push(known ? `${sec(ta)} vs ${sec(tb)}` : '—', known ? `**${ratio(ta, tb)}**` : '—');
  }
  cells.push(`${mib(peak(p.a))} vs ${mib(peak(p.b))}`, target);
  return `| ${cells.join(' | ')} |`;
}

/** The yardstick's time over memlens's, in words either way. */
function speedup(r: number): string {
  return r >= 1 ? `${r.toFixed(2)}× faster` : `${(1 / r).toFixed(2)}× slower`;
}

function header(title: string, runs: number, threads = false): void {
  console.log(`\n${title} (medians of ${runs} alternating runs after a warm-up; peak RSS: largest run)\n`);
  const idle = threads ? ['least wall on idle cores', 'its ratio'] : [];
  const columns = [
    'measure',
    'wall, memlens vs yardstick',
    'wall ratio',
    'CPU (user+sys)',
    'CPU ratio',
    ...idle,
    'peak RSS',
    'target',
  ];
  console.log(`| ${columns.join(' | ')} |`);
  console.log(`|${columns.map(() => '---|').join('')}`);
}

/** The corpus's largest snapshots (the real files, not the generator's). */
function largestCorpusFiles(count: number): string[] {
  let names: string[];
  try {
    names = readdirSync(CORPUS).filter((n) => n.endsWith('.pickle'));
  } catch {
    return [];
  }
  return names
    .map((n) => join(CORPUS, n))
    .sort((x, y) => statSync(y).size - statSync(x).size)
    .slice(0, count);
}

export interface RatioOptions {
  /** The synthetic trace the analyses and the large peer row use ("1GB"). */
  size: string;
  /** The synthetic snapshot of the small peer row ("58MB", the issue's). */
  small: string;
  runs: number;
  /** Also the yardstick on `size` (minutes and ~5 GB of memory on a 1 GB trace). */
  peerOnLarge: boolean;
  corpusFiles: number;
  /** Generated runs ("8x58MB", "64x8MB": ranks x size) timed against `summary` of their files. */
  generatedRuns: string[];
}

/** Issue 25's targets by run; a run of many tiny files is held to a wall time (overhead per file). */
const RUN_TARGETS: Record<string, string> = { '200x5KB': '≤ 2 s wall' };

/**
 * `run --no-cache` of a generated run against `summary` of the same files in one process: the
 * work a run adds to each file's summary, set against the second core it can use.
 */
export function runRatioRows(specs: string[], runs: number, scratch: string): void {
  if (specs.length === 0) return;
  header('`memlens run` on every core, against `summary` of the same files in one process', runs, true);
  for (const spec of specs) {
    const m = /^(\d+)x(\w+)$/.exec(spec);
    if (m === null) throw new Error(`--ratios-run takes RANKSxSIZE (8x58MB), not ${spec}`);
    const dir = cachedRun(Number(m[1]), m[2]!);
    const run: Timed = {
      label: `memlens run --no-cache ${basename(dir)}`,
      nodeArgs: [...NODE_FLAGS, CLI, 'run', '--no-cache', dir],
    };
    const summary: Timed = {
      label: `memlens summary (${m[1]} files)`,
      nodeArgs: [...NODE_FLAGS, CLI, 'summary', ...runFiles(dir)],
    };
    console.log(
      row(
        `\`run --no-cache\` of ${m[1]} × ${m[2]}`,
        run,
        summary,
        runs,
        scratch,
        RUN_TARGETS[spec] ?? '≥ 1.6× faster',
        true,
        true,
      ),
    );
  }
}

export function benchRatios(o: RatioOptions): void {
  const runs = Math.max(3, o.runs);
  const scratch = mkdtempSync(join(tmpdir(), 'memlens-ratios-'));
  try {
    console.log(`\n## Issue 25, CLI rows\n\n${loadLine()}`);
    header('start-up', Math.max(7, runs));
    const node0: Timed = { label: 'node -e 0', nodeArgs: ['-e', '0'] };
    console.log(
      row(
        '`memlens --version` vs `node -e 0`',
        memlens('--version'),
        node0,
        Math.max(7, runs),
        scratch,
        '≤ 1.5×',
      ),
    );
    const big = cachedSnapshot(o.size);
    const small = cachedSnapshot(o.small);
    header('against the peer, MemoryViz.js (`../shared/peer/`)', runs);
    console.log(
      row(
        `\`summary\` of synthetic ${o.small}`,
        memlens('summary', small),
        memoryViz(small),
        runs,
        scratch,
        '≥ 10× faster',
        true,
      ),
    );
    if (o.peerOnLarge)
      console.log(
        row(
          `\`summary\` of synthetic ${o.size}`,
          memlens('summary', big),
          memoryViz(big),
          runs,
          scratch,
          '≥ 12× faster',
          true,
        ),
      );
    for (const f of largestCorpusFiles(o.corpusFiles))
      console.log(
        row(
          `\`summary\` of corpus ${basename(f)}`,
          memlens('summary', f),
          memoryViz(f),
          runs,
          scratch,
          '',
          true,
        ),
      );
    header(`each analysis against \`summary\` of synthetic ${o.size}`, runs);
    const summary = memlens('summary', big);
    console.log(row('`diagnose`', memlens('diagnose', big), summary, runs, scratch, '≤ 1.3×'));
    for (const c of ANALYSES) console.log(row(`\`${c}\``, memlens(c, big), summary, runs, scratch, '≤ 1.5×'));
    runRatioRows(o.generatedRuns, runs, scratch);
    for (const f of largestCorpusFiles(o.corpusFiles)) {
      header(`each analysis against \`summary\` of corpus ${basename(f)}`, runs);
      const s = memlens('summary', f);
      console.log(row('`diagnose`', memlens('diagnose', f), s, runs, scratch, '≤ 1.3×'));
      for (const c of ANALYSES) console.log(row(`\`${c}\``, memlens(c, f), s, runs, scratch, '≤ 1.5×'));
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
