import type { Command } from 'commander';
import { type RunReport, runLead, runReport } from '../../engine/analyses/run/index.js';
import { discoverRun, type Run } from '../../engine/run-layout/index.js';
import { expandPaths, isDirectory, leftOutLines } from '../../node/files/expand-paths.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import { decodeRun } from '../../node/workers/decode-run.js';
import { parseCount } from '../text/run-files.js';
import { renderRun, skippedText } from './run-text.js';

interface RunCliOptions {
  jobs?: number;
  cache: boolean;
  verifyCache?: boolean;
  json?: boolean;
  verbose?: boolean;
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
    .option('--verbose', 'list each file left out as not a snapshot, with why')
    .option(
      '--verify-cache',
      'look every file up in the cache by its content (re-reading it), not by its size, mtime and inode',
    )
    .option(
      '--json',
      'print JSON: {"runs": [{"root", "layout", "snapshots": [{"file", "step", "rank", "replica", "pid", "kind", "devices"}], "outliers", "growth", "ooms", "shared", "skipped", "not_read", "lead"}]}',
    )
    .action(async (args: string[], opts: RunCliOptions) => {
      const reports: RunReport[] = [];
      for (const { root, run } of runsOf(args)) {
        const listed = opts.json
          ? '--json lists them'
          : opts.verbose
            ? 'listed below'
            : '--verbose lists them';
        for (const line of leftOutLines(root, run, listed)) process.stderr.write(`${line}\n`);
        const snapshots = await decodeRun(run, { ...opts, hereToo: true });
        const report = runReport(root, run, snapshots);
        if (opts.json) reports.push(report);
        else {
          process.stdout.write(`${renderRun(report, process.stdout.columns || 100)}\n`);
          if (opts.verbose && report.skipped.length > 0)
            process.stdout.write(`${skippedText(report).join('\n')}\n`);
        }
        // Exit 0 says every snapshot of the run was read.
        if (snapshots.some((s) => s.result === null) || run.notRead.length > 0)
          process.exitCode = EXIT_BAD_INPUT;
      }
      if (opts.json) process.stdout.write(`${JSON.stringify({ runs: reports.map(jsonRun) }, null, 1)}\n`);
    });
}

/** Each directory is a run; snapshot files named on their own make one run together. */
function runsOf(args: string[]): { root: string; run: Run }[] {
  const dirs = args.filter(isDirectory);
  const files = args.filter((a) => !isDirectory(a));
  const runs = expandPaths(dirs, false).runs;
  if (files.length > 0) runs.push({ root: '.', run: discoverRun(files) });
  return runs;
}

/**
 * The documented JSON: the table's rows are the snapshots' own figures, so they are left out; the
 * worst finding the text leads with is added.
 */
function jsonRun(r: RunReport) {
  const { rows: _rows, ...rest } = r;
  return { ...rest, lead: runLead(r) };
}
