import { realpath, stat } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { SnapshotError } from '../engine/base/index.js';
import { gatherCycleInputs } from '../node/cycles/cycle-inputs.js';
import { fileSize } from '../node/files/read-file.js';
import { type RunScan, scanRun } from '../node/files/scan-run.js';

/** A snapshot file `memlens view` may serve, and nothing else. */
export interface ServedFile {
  /** Path as shown to the user (relative to the directory it was found in, or as given). */
  name: string;
  /** "step 3 · rank 1" for <save_path>/step<N>/torch_memory_rank<R>_pid<P>.pickle, else ''. */
  label: string;
  path: string;
  size: number;
  /** Which file `path` was when it was listed (fileIdentity): only that file is ever served. */
  identity: string;
}

/**
 * The files behind `memlens view PATH...`: each file as given, and for a directory (a run's
 * save_path) every snapshot file below it, in a stable order (read by `scanOf`: a caller that
 * has scanned it already passes that scan). A path that does not exist, or a directory without
 * snapshots, is bad input.
 */
export async function collectFiles(
  paths: string[],
  scanOf: (dir: string) => RunScan = scanRun,
): Promise<ServedFile[]> {
  const out: ServedFile[] = [];
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = (await stat(p)).isDirectory();
    } catch {
      isDir = false; // fileSize below names the problem
    }
    if (!isDir) {
      out.push(await served(p, p));
      continue;
    }
    // The run's own scan (scan-run.ts): links followed, any depth, an unreadable part named, not fatal.
    const scan = scanOf(p);
    // Named from the folder given: a folder above it (`global_step3/run/`) names no step of its files.
    const found = scan.files
      .map((f) => ({ f, name: join(basename(p), relative(p, f)) }))
      .sort((a, b) => byStepAndRank(a.name, b.name));
    // A run recorded without a GPU holds only cycle graphs: its page is their Cycles tab.
    if (found.length === 0 && scan.notRead.length === 0 && gatherCycleInputs([p]).cycles.length === 0)
      throw new SnapshotError(`${p}: no snapshot files (.pickle, .json, .gz) in this directory`);
    for (const { f, name } of found) out.push(await served(f, name));
  }
  return dedupe(out);
}

async function served(path: string, name: string): Promise<ServedFile> {
  try {
    const real = await realpath(path);
    return {
      name,
      label: labelOf(name),
      path: real,
      size: await fileSize(path),
      identity: await fileIdentity(real),
    };
  } catch (e) {
    throw new SnapshotError(`${path}: ${(e as Error).message}`);
  }
}

/** Device and inode: what names one file, whatever path reaches it. */
export async function fileIdentity(path: string): Promise<string> {
  return identityOf(await stat(path, { bigint: true }));
}

export function identityOf(st: { dev: bigint; ino: bigint }): string {
  return `${st.dev}:${st.ino}`;
}

function labelOf(path: string): string {
  const step = /(?:^|[/\\])step[_-]?(\d+)(?:[/\\]|$)/i.exec(path)?.[1];
  const rank = /rank[_-]?(\d+)/i.exec(basename(path))?.[1];
  return [step && `step ${step}`, rank && `rank ${rank}`].filter(Boolean).join(' · ');
}

function byStepAndRank(a: string, b: string): number {
  const key = (p: string): [number, number] => {
    const step = /step[_-]?(\d+)/i.exec(p)?.[1];
    const rank = /rank[_-]?(\d+)/i.exec(basename(p))?.[1];
    return [step ? Number(step) : -1, rank ? Number(rank) : -1];
  };
  const [sa, ra] = key(a);
  const [sb, rb] = key(b);
  return sa - sb || ra - rb || (a < b ? -1 : a > b ? 1 : 0);
}

/** The same file named twice is served once; two files with one display name get their full path. */
function dedupe(files: ServedFile[]): ServedFile[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const unique = [...byPath.values()];
  const count = new Map<string, number>();
  for (const f of unique) count.set(f.name, (count.get(f.name) ?? 0) + 1);
  return unique.map((f) => (count.get(f.name)! > 1 ? { ...f, name: f.path } : f));
}
