import fs from 'node:fs';
import path from 'node:path';
import { holdsSnapshots, isSnapshotName, type LeftOut } from '../../engine/run-layout/index.js';
import { notSnapshotReason } from './sniff-snapshot.js';

/** What a run directory holds: its snapshot files, what was left out and why, what could not be read. */
export interface RunScan {
  files: string[];
  skipped: LeftOut[];
  notRead: LeftOut[];
  /** Folders holding memlens record's `.memlens/` record: the runs it wrote (discoverRun's `recorded`). */
  recorded: string[];
}

/** Why a file (by its real path) is not a snapshot, or null: notSnapshotReason, or a watcher's memo of it. */
export type Sniff = (real: string) => string | null;

/** The file-system calls a scan makes: a seam, so tests can make a directory unreadable even as root. */
export interface ScanFs {
  readdir(dir: string): fs.Dirent[];
  stat(p: string): fs.Stats;
  realpath(p: string): string;
}

const nodeFs: ScanFs = {
  readdir: (dir) => fs.readdirSync(dir, { withFileTypes: true }),
  stat: (p) => fs.statSync(p),
  realpath: (p) => fs.realpathSync(p),
};

/**
 * Every snapshot file below `root`, at any depth (sweep folders nest runs deep), following
 * symbolic links to files and directories (runs are linked together from several places); each
 * directory is read once by its real path, so a link back up the tree ends there. Hidden entries
 * (`.memlens/`) and cycle graphs (`cycles/`) are not walked. Every other file found is either
 * returned or listed with why it was left out; a directory or link that cannot be read is listed
 * in notRead with the system's reason.
 */
export function scanRun(root: string, io: ScanFs = nodeFs, sniff: Sniff = notSnapshotReason): RunScan {
  const out: RunScan = { files: [], skipped: [], notRead: [], recorded: [] };
  /** Each folder read, by its real path, with the name it was read under. */
  const seenDirs = new Map<string, string>();
  const seenFiles = new Map<string, Found[]>();
  const pending = [root];
  const realOf = (p: string): string | null => {
    try {
      return io.realpath(p);
    } catch (e) {
      out.notRead.push({ path: p, reason: errorText(e) });
      return null;
    }
  };
  const rootReal = realOf(root);
  if (rootReal !== null) seenDirs.set(rootReal, root);
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = io.readdir(dir).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (e) {
      out.notRead.push({ path: dir, reason: errorText(e) });
      continue;
    }
    const below: string[] = [];
    for (const e of entries) {
      if (e.name.startsWith('.')) {
        // memlens record keeps its per-process records there (python/memlens/_record.py) from the
        // first window on, before run.json exists; only a layout's name follows from it.
        if (e.name === '.memlens' && e.isDirectory()) out.recorded.push(dir);
        continue;
      }
      // memlens record's own manifest (record-manifest.ts) describes the run: part of it, not a file left out.
      if (dir === root && e.name === 'run.json') continue;
      const p = path.join(dir, e.name);
      const kind = entryKind(e, p, io, out);
      if (kind === 'dir' && holdsSnapshots(e.name)) {
        const real = realOf(p);
        if (real === null) continue;
        const first = seenDirs.get(real);
        if (first !== undefined)
          out.skipped.push({ path: p, reason: `the same folder as ${first}, read once` });
        else {
          seenDirs.set(real, p);
          below.push(p);
        }
      } else if (kind === 'file') fileFound({ path: p, link: e.isSymbolicLink() }, out, seenFiles, realOf);
    }
    // Depth first, in name order: what is listed comes in the order a person reads the tree.
    pending.push(...below.reverse());
  }
  for (const [real, names] of seenFiles) keepOne(real, names, out, sniff);
  return out;
}

interface Found {
  path: string;
  link: boolean;
}

/**
 * One file reached by several names (a link beside its target) is one snapshot: kept under the
 * name that is not a link (else the first by name), the others listed as the same file.
 */
function keepOne(real: string, names: Found[], out: RunScan, sniff: Sniff): void {
  const [kept, ...others] = [...names].sort(
    (a, b) => Number(a.link) - Number(b.link) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
  );
  for (const o of others) out.skipped.push({ path: o.path, reason: `the same file as ${kept!.path}` });
  const why = sniff(real);
  if (why === null) out.files.push(kept!.path);
  else out.skipped.push({ path: kept!.path, reason: why });
}

function fileFound(
  f: Found,
  out: RunScan,
  seen: Map<string, Found[]>,
  realOf: (p: string) => string | null,
): void {
  if (!isSnapshotName(f.path)) {
    out.skipped.push({
      path: f.path,
      reason: 'not a snapshot file name (.pickle, .pkl, .json, optionally .gz)',
    });
    return;
  }
  const real = realOf(f.path);
  if (real !== null) seen.set(real, [...(seen.get(real) ?? []), f]);
}

/** A directory entry's type, through a symbolic link; a link that cannot be followed is noted. */
function entryKind(e: fs.Dirent, p: string, io: ScanFs, out: RunScan): 'dir' | 'file' | 'other' {
  if (!e.isSymbolicLink()) return e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other';
  try {
    const st = io.stat(p);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch (err) {
    out.notRead.push({ path: p, reason: errorText(err) });
    return 'other';
  }
}

/** "EACCES: permission denied" without the path Node appends (the line names the path already). */
function errorText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (typeof err.code === 'string' && typeof err.message === 'string') {
    const words = err.message.replace(/^[A-Z]+:\s*/, '').replace(/,\s*\w+\s+'.*'$/, '');
    return `${err.code}: ${words}`;
  }
  return String(e);
}
