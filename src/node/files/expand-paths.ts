import fs from 'node:fs';
import { discoverRun, type Run } from '../../engine/run-layout/index.js';
import { type RunScan, scanRun } from './scan-run.js';

export interface ExpandedPaths {
  /** Files in the order given; a directory's snapshots in run order in its place. */
  files: string[];
  /** The run each directory argument holds, for commands that show runs. */
  runs: { root: string; run: Run }[];
}

/**
 * Every command that takes snapshot files also takes directories: each directory becomes its
 * snapshot files (found by name and, for JSON, by content, at any depth) in run order; what was
 * left out is said in one line on stderr (leftOutLines). Files are passed
 * through as given, so a bad file still gets its own one-line error.
 */
export function expandPaths(args: string[], say = true): ExpandedPaths {
  const files: string[] = [];
  const runs: ExpandedPaths['runs'] = [];
  for (const arg of args) {
    if (!isDirectory(arg)) {
      files.push(arg);
      continue;
    }
    const run = runOfScan(arg, scanRun(arg));
    if (say) for (const line of leftOutLines(arg, run)) process.stderr.write(`${line}\n`);
    runs.push({ root: arg, run });
    files.push(...run.cells.map((c) => c.path));
  }
  return { files, runs };
}

/** Whether `p` names a directory (false for a missing path: its own error comes later). */
export function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Modification time in ms, undefined when it cannot be read (the file's own error comes later). */
export function mtime(p: string): number | undefined {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Snapshot files below `root` (see scanRun), for callers that need only the files. */
export function snapshotsUnder(root: string): string[] {
  return scanRun(root).files;
}

/** A scanned directory as a run; a directory with no snapshot (and nothing unreadable) is bad input. */
export function runOfScan(root: string, scan: RunScan): Run {
  if (scan.files.length === 0 && scan.notRead.length === 0) {
    const others = scan.skipped.length > 0 ? ` (${scan.skipped.length} other files skipped)` : '';
    throw new Error(
      `${root}: no snapshot files (.pickle, .pkl, .json, optionally .gz) in this directory${others}`,
    );
  }
  return discoverRun(
    scan.files.map((f) => ({ path: f, mtimeMs: mtime(f) })),
    { skipped: scan.skipped, notRead: scan.notRead, roots: [root], recorded: scan.recorded },
  );
}

/**
 * What `run`, `view` and `report` say on stderr about a run's directory: each part that could not
 * be read, and in one line how many files were left out as not snapshots.
 */
export function leftOutLines(root: string, run: Run, listed = 'memlens run --verbose lists them'): string[] {
  const lines = run.notRead.map((n) => `memlens: ${n.path}: not read: ${n.reason}`);
  const n = run.skipped.length;
  if (n > 0)
    lines.push(
      `memlens: ${root}: skipped ${n === 1 ? '1 file that is not a snapshot' : `${n} files that are not snapshots`} (${listed})`,
    );
  return lines;
}
