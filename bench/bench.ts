/**
 * `npm run bench`: generates (and caches in bench/cache) synthetic snapshots, then measures
 * `memlens summary`'s decode+index against the time to merely read the file, each in a fresh
 * process. Prints the machine, the figures and a Markdown table for bench/RESULTS.md.
 *
 *   npm run bench [-- --sizes 100MB,1GB,2.2GB] [--runs 3]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { cachedGcSnapshot, cachedSnapshot, ROOT, TOOLS } from './cached-snapshot.js';
import { benchCollector, benchCommands } from './commands.js';
import { benchExport } from './export-bench.js';
import { loadLine, machineLine } from './machine.js';
import { benchRatios, runRatioRows } from './ratios.js';
import { benchReport } from './report-bench.js';
import { benchRun } from './run-bench.js';
import { benchSimulator } from './simulator-table.js';

interface Measurement {
  ms: number;
  bytes: number;
  entries: number;
  maxRssBytes: number;
}

type What = 'read' | 'touch' | 'summary' | 'model';

function measure(what: What, file: string): Measurement {
  const out = execFileSync(
    process.execPath,
    [...NODE_FLAGS, join(TOOLS, 'bench', 'measure.js'), what, file],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(out) as Measurement;
}

function best(what: What, file: string, runs: number): Measurement {
  let top: Measurement | undefined;
  for (let i = 0; i < runs; i++) {
    const m = measure(what, file);
    if (!top || m.ms < top.ms) top = { ...m, maxRssBytes: Math.max(m.maxRssBytes, top?.maxRssBytes ?? 0) };
    else top.maxRssBytes = Math.max(top.maxRssBytes, m.maxRssBytes);
  }
  return top!;
}

const mb = (bytes: number): string => (bytes / 1e6).toFixed(0);
const speed = (m: Measurement): string => `${m.ms.toFixed(0)} ms (${mb(m.bytes / (m.ms / 1000))} MB/s)`;

interface BenchOptions {
  sizes: string;
  runs: string;
  commands: string | false;
  commandRuns: string;
  onlyGc?: boolean;
  run: string | false;
  onlyRun?: boolean;
  export: string | false;
  onlyExport?: boolean;
  report: string | false;
  onlyReport?: boolean;
  ratios: string | false;
  ratiosSmall: string;
  ratioRuns: string;
  peerOnLarge: boolean;
  corpusFiles: string;
  onlyRatios?: boolean;
  ratiosRun: string;
  onlyRunRatios?: boolean;
}

function main(opts: BenchOptions): void {
  const runs = Math.max(1, Number(opts.runs));
  console.log(machineLine());
  if (opts.onlyRunRatios) {
    onlyRunRatios(opts);
    return;
  }
  if (opts.ratios !== false) ratios(opts);
  if (opts.onlyRatios) return;
  if (opts.onlyGc) {
    collector(opts);
    return;
  }
  if (opts.onlyRun) {
    if (opts.run !== false) benchRun(opts.run);
    return;
  }
  if (opts.onlyReport) {
    if (opts.report !== false) reportBench(opts.report);
    return;
  }
  if (opts.onlyExport) {
    if (opts.export !== false) benchExport(opts.export);
    return;
  }
  console.log(`best of ${runs} runs, each in a fresh process (peak RSS: the largest of the runs)\n`);
  console.log(
    '"read only": the file read in 4 MiB chunks. "JS byte loop": the same, plus a JS loop summing every',
  );
  console.log('byte: the speed of the simplest possible JS pass over the data on this machine, for scale.');
  console.log(
    '"full model": decode, summary, and every index other commands build on first use (allocation table,',
  );
  console.log('per-entry totals, live-set checkpoints), which a summary does not need.\n');
  console.log(
    '| file | size | trace entries | read only | JS byte loop | summary (decode+index) | throughput | entries/s | peak RSS | RSS − file size | full model | its peak RSS |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const size of opts.sizes.split(',')) {
    const file = cachedSnapshot(size.trim());
    const floor = best('read', file, runs);
    const touch = best('touch', file, runs);
    const s = best('summary', file, runs);
    const full = best('model', file, runs);
    const rate = (s.bytes / 1e6 / (s.ms / 1000)).toFixed(0);
    const eps = (s.entries / (s.ms / 1000) / 1e6).toFixed(2);
    console.log(
      `| synthetic ${size} | ${mb(s.bytes)} MB | ${s.entries.toLocaleString('en-US')} | ${speed(floor)} | ${speed(touch)} | ${(s.ms / 1000).toFixed(2)} s | ${rate} MB/s | ${eps} M/s | ${mb(s.maxRssBytes)} MB | ${mb(s.maxRssBytes - s.bytes)} MB | ${(full.ms / 1000).toFixed(2)} s | ${mb(full.maxRssBytes)} MB |`,
    );
  }
  if (opts.commands === false) return;
  const size = opts.commands.trim();
  const measureJs = join(TOOLS, 'bench', 'measure.js');
  benchCommands(
    measureJs,
    cachedSnapshot(size),
    `synthetic-${size}.pickle`,
    Math.max(1, Number(opts.commandRuns)),
  );
  benchSimulator(join(TOOLS, 'bench'), cachedSnapshot(size), `synthetic-${size}.pickle`, 1);
  collector(opts);
  if (opts.run !== false) benchRun(opts.run);
  if (opts.export !== false) benchExport(opts.export);
  if (opts.report !== false) reportBench(opts.report);
}

function ratios(opts: BenchOptions): void {
  if (opts.ratios === false) return;
  benchRatios({
    size: opts.ratios.trim(),
    small: opts.ratiosSmall.trim(),
    runs: Number(opts.ratioRuns),
    peerOnLarge: opts.peerOnLarge,
    corpusFiles: Number(opts.corpusFiles),
    generatedRuns: runSpecs(opts),
  });
}

const runSpecs = (opts: BenchOptions): string[] =>
  opts.ratiosRun
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

function onlyRunRatios(opts: BenchOptions): void {
  const scratch = mkdtempSync(join(tmpdir(), 'memlens-ratios-'));
  try {
    console.log(loadLine());
    runRatioRows(runSpecs(opts), Math.max(3, Number(opts.ratioRuns)), scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function reportBench(sizes: string): void {
  benchReport(sizes).catch((e: Error) => {
    console.error(e);
    process.exitCode = 1;
  });
}

function collector(opts: BenchOptions): void {
  const size = opts.commands === false ? '1GB' : opts.commands.trim();
  benchCollector(
    join(ROOT, 'dist', 'cli', 'main.js'),
    join(TOOLS, 'bench', 'measure.js'),
    cachedGcSnapshot(size),
    `synthetic-${size}-gc-every-2.pickle`,
    Math.max(1, Number(opts.commandRuns)),
  );
}

new Command('bench')
  .option('--sizes <list>', 'synthetic file sizes', '100MB,1GB')
  .option('--runs <n>', 'runs per measurement (best is reported)', '3')
  .option('--commands <size>', 'also time every memlens command on the synthetic file of this size', '1GB')
  .option('--no-commands', 'skip the per-command timings')
  .option('--command-runs <n>', 'runs per command (best is reported)', '1')
  .option('--only-gc', 'only gc and diagnose on the collector trace (--commands size)')
  .option(
    '--run <ranksxsize>',
    'also time memlens run on a generated run of this many ranks and file size',
    '64x8MB',
  )
  .option('--no-run', 'skip the run benchmark')
  .option('--only-run', 'only the run benchmark')
  .option('--export <size>', 'also time export to Parquet and sql on the synthetic file of this size', '1GB')
  .option('--no-export', 'skip the export benchmark')
  .option('--only-export', 'only the export benchmark')
  .option('--report <sizes>', 'also time memlens report and its page on these synthetic sizes', '100MB')
  .option('--no-report', 'skip the report benchmark')
  .option('--ratios <size>', "issue 25's CLI rows as ratios on the synthetic file of this size", '1GB')
  .option('--no-ratios', 'skip the ratio rows')
  .option('--only-ratios', 'only the ratio rows')
  .option('--ratios-small <size>', 'the synthetic snapshot of the small peer row', '58MB')
  .option('--ratio-runs <n>', 'alternating runs per ratio row (medians; at least 3)', '3')
  .option('--no-peer-on-large', 'skip MemoryViz.js on the --ratios file (minutes, ~5 GB of memory on 1 GB)')
  .option('--corpus-files <n>', "the corpus's largest files also measured", '3')
  .option(
    '--ratios-run <list>',
    'generated runs (RANKSxSIZE) whose `run --no-cache` is timed against `summary` of their files',
    '8x58MB,64x8MB,200x5KB',
  )
  .option('--only-run-ratios', 'only the --ratios-run rows')
  .option('--only-report', 'only the report benchmark')
  .action(main)
  .parse();
