import type { Command } from 'commander';
import { type RunReport, runReport } from '../../engine/analyses/run/run-report.js';
import { discoverRun, type Run } from '../../engine/run/discover.js';
import { decodeRun } from '../decode-run.js';
import { expandPaths, isDirectory } from '../expand-paths.js';
import { EXIT_BAD_INPUT, parseCount } from '../run-files.js';
import { renderRun } from './run-text.js';

interface RunCliOptions {
  jobs?: number;
  cache: boolean;
  verifyCache?: boolean;
  json?: boolean;
}

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
    .option('--jobs <n>', 'decode on n threads at once (default: the number of cores)', parseCount)
    .option('--no-cache', 'decode every file: neither read nor write the result cache (~/.cache/memlens)')
    .option(
      '--verify-cache',
      'look every file up in the cache by its content (re-reading it), not by its size, mtime and inode',
    )
    .option(
      '--json',
      'print JSON: {"runs": [{"root", "layout", "snapshots": [{"file", "step", "rank", "pid", "kind", "devices"}], "outliers", "growth", "ooms"}]}',
    )
    .action(async (args: string[], opts: RunCliOptions) => {
      const reports: RunReport[] = [];
      for (const { root, run } of runsOf(args)) {
        const snapshots = await decodeRun(run, { ...opts, hereToo: true });
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

/** The documented JSON: the table's rows are the snapshots' own figures, so they are left out. */
function jsonRun(r: RunReport) {
  const { rows: _rows, ...rest } = r;
  return rest;
}
