import fs from 'node:fs';
import path from 'node:path';
import { discoverRun, holdsSnapshots, isSnapshotName, type Run } from '../engine/run/discover.js';

export interface ExpandedPaths {
  /** Files in the order given; a directory's snapshots in run order in its place. */
  files: string[];
  /** The run each directory argument holds, for commands that show runs. */
  runs: { root: string; run: Run }[];
}

/** Deeper than any producer's layout; guards against symlink loops and home-directory mistakes. */
const MAX_DEPTH = 6;

/**
 * Every command that takes snapshot files also takes directories: each directory becomes its
 * snapshot files (found by name, at most MAX_DEPTH levels down) in run order. Files are passed
 * through as given, so a bad file still gets its own one-line error.
 */
export function expandPaths(args: string[]): ExpandedPaths {
  const files: string[] = [];
  const runs: ExpandedPaths['runs'] = [];
  for (const arg of args) {
    if (!isDirectory(arg)) {
      files.push(arg);
      continue;
    }
    const found = snapshotsUnder(arg);
    if (found.length === 0)
      throw new Error(`${arg}: no snapshot files (.pickle, .pkl, .json, optionally .gz) in this directory`);
    const run = discoverRun(found.map((f) => ({ path: f, mtimeMs: mtime(f) })));
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

/** Snapshot files below `root`, skipping hidden entries, cycle graphs and files still being written. */
export function snapshotsUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < MAX_DEPTH && holdsSnapshots(e.name)) walk(p, depth + 1);
      else if (e.isFile() && isSnapshotName(e.name)) out.push(p);
    }
  };
  walk(root, 0);
  return out;
}
