/**
 * `<out>/run.json`, written by `memlens record` when the command has ended: the command, where and
 * when it ran, the PyTorch versions and allocator settings its processes saw, and every file the
 * run left, gathered from the helper's per-process records (`<out>/.memlens/proc_<pid>.json`) and
 * checked against the directory.
 */
import fs from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { snapshotsUnder } from '../../node/files/expand-paths.js';
import { writeFileAtomically } from '../../node/files/write-file.js';

/** What the Python helper writes per process (python/memlens/_record.py, write_proc). */
export interface ProcRecord {
  pid: number;
  ppid: number;
  rank: number | null;
  hostname: string;
  argv: string[];
  python: string;
  torch: string | null;
  /** 'recording', 'cpu-only build', 'no device', 'not initialised', 'torch not imported'. */
  cuda: string;
  history_api: string | null;
  step_hook: string | null;
  cycles: string | null;
  allocator: Record<string, string>;
  started: string;
  ended: string | null;
  steps: number;
  files: { path: string; kind: string; step: number; name: string | null; bytes: number; time: string }[];
  dropped: { path: string; step: number; bytes: number; time: string }[];
  errors: { where: string; error: string; time: string }[];
}

export interface RecordedFile {
  /** Relative to the output directory, with '/'. */
  path: string;
  bytes: number;
  kind: string;
  step: number | null;
  name: string | null;
  rank: number | null;
  pid: number | null;
}

export interface RunManifest {
  memlens_record: 1;
  command: string[];
  cwd: string;
  out: string;
  hostname: string;
  started: string;
  ended: string;
  exit_code: number;
  signal: string | null;
  options: Record<string, unknown>;
  torch: string[];
  allocator: Record<string, string>[];
  processes: Omit<ProcRecord, 'files' | 'dropped' | 'errors' | 'allocator'>[];
  files: RecordedFile[];
  cycles: { path: string; bytes: number }[];
  dropped: (ProcRecord['dropped'][number] & { rank: number | null; pid: number })[];
  errors: (ProcRecord['errors'][number] & { rank: number | null; pid: number })[];
}

export interface RecordRun {
  command: string[];
  out: string;
  started: Date;
  ended: Date;
  exitCode: number;
  signal: string | null;
  options: Record<string, unknown>;
}

/** The helper's records; one that cannot be read (a process killed mid-write leaves none) is skipped. */
export function readProcRecords(out: string): ProcRecord[] {
  const dir = path.join(out, '.memlens');
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => /^proc_\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const records: ProcRecord[] = [];
  for (const n of names) {
    try {
      records.push(JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as ProcRecord);
    } catch {
      // unreadable: that process's files are still listed from the directory
    }
  }
  return records.sort((a, b) => (a.rank ?? -1) - (b.rank ?? -1) || a.pid - b.pid);
}

export function buildManifest(run: RecordRun, procs: ProcRecord[]): RunManifest {
  const known = new Map<string, { proc: ProcRecord; file: ProcRecord['files'][number] }>();
  for (const proc of procs) for (const file of proc.files) known.set(file.path, { proc, file });
  const cyclesDir = path.join(run.out, 'cycles');
  const files = snapshotsUnder(run.out)
    .filter((p) => !p.startsWith(cyclesDir + path.sep))
    .map((p): RecordedFile => {
      const rel = relative(run.out, p);
      const k = known.get(rel);
      if (k === undefined) return { ...fromPath(rel), bytes: sizeOf(p) };
      return {
        path: rel,
        bytes: sizeOf(p),
        kind: k.file.kind,
        step: k.file.step,
        name: k.file.name,
        rank: k.proc.rank,
        pid: k.proc.pid,
      };
    })
    .sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
  const cycles = listFiles(cyclesDir)
    .filter((n) => n.endsWith('.json'))
    .map((n) => ({ path: `cycles/${n}`, bytes: sizeOf(path.join(cyclesDir, n)) }));
  const who = (p: ProcRecord) => ({ rank: p.rank, pid: p.pid });
  return {
    memlens_record: 1,
    command: run.command,
    cwd: process.cwd(),
    out: run.out,
    hostname: hostname(),
    started: run.started.toISOString(),
    ended: run.ended.toISOString(),
    exit_code: run.exitCode,
    signal: run.signal,
    options: run.options,
    torch: distinct(procs.map((p) => p.torch).filter((v): v is string => v !== null)),
    allocator: distinct(procs.filter((p) => p.torch !== null).map((p) => JSON.stringify(p.allocator))).map(
      (s) => JSON.parse(s) as Record<string, string>,
    ),
    processes: procs.map(({ files: _f, dropped: _d, errors: _e, allocator: _a, ...rest }) => rest),
    files,
    cycles,
    dropped: procs.flatMap((p) => p.dropped.map((d) => ({ ...d, ...who(p) }))),
    errors: procs.flatMap((p) => p.errors.map((e) => ({ ...e, ...who(p) }))),
  };
}

export function writeManifest(out: string, manifest: RunManifest): void {
  writeFileAtomically(path.join(out, 'run.json'), `${JSON.stringify(manifest, null, 1)}\n`);
}

/**
 * A file the helper's record does not list yet (it rewrites the record every few seconds, and a
 * killed process never again): what its path says, in the helper's layout.
 */
function fromPath(rel: string): Omit<RecordedFile, 'bytes'> {
  const m =
    /^(?:(step)(\d+)|(oom)_[^/]*|(.*)_step(\d+)(?:_\d+)?)\/torch_memory_(?:oom_)?rank(\d+)_pid(\d+)\.pickle$/.exec(
      rel,
    );
  if (m === null) return { path: rel, kind: 'unknown', step: null, name: null, rank: null, pid: null };
  const named = m[4];
  return {
    path: rel,
    kind: m[1] ? 'step' : m[3] ? 'oom' : named === 'exit' ? 'exit' : 'named',
    step: m[2] !== undefined ? Number(m[2]) : m[5] !== undefined ? Number(m[5]) : null,
    name: named ?? null,
    rank: Number(m[6]),
    pid: Number(m[7]),
  };
}

function relative(root: string, p: string): string {
  return path.relative(root, p).split(path.sep).join('/');
}

function sizeOf(p: string): number {
  try {
    return fs.statSync(p).size;
  } catch {
    return 0;
  }
}

function listFiles(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  } catch {
    return [];
  }
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}
