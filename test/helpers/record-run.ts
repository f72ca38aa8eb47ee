/**
 * Runs `memlens record` (the built CLI) on a Python program written to a temporary directory, with
 * /usr/bin/python3 (Debian's torch 1.13 CPU build; `python3` on PATH may have no torch).
 */
import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunManifest } from '../../src/cli/record/record-manifest.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
export const PYTHON = '/usr/bin/python3';
/** The test-only user sitecustomize and CUDA stand-in (see its docstring). */
export const STANDIN_DIR = join(import.meta.dirname, '..', 'record-standin');

export interface Recorded {
  dir: string;
  out: string;
  result: SpawnSyncReturns<string>;
  /** The memlens lines of stderr. */
  memlensLines: string[];
}

const made: string[] = [];

/** A new temporary directory, removed by removeTempDirs (each test file's afterAll). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `memlens-${prefix}-`));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** `memlens record [recordArgs] -- python program.py [programArgs]` with the stand-in when asked. */
export function recordProgram(
  program: string,
  opts: { recordArgs?: string[]; programArgs?: string[]; env?: NodeJS.ProcessEnv; standin?: boolean } = {},
): Recorded & { log: () => Record<string, unknown>[] } {
  const dir = tempDir('record');
  const script = join(dir, 'program.py');
  writeFileSync(script, program);
  const out = join(dir, 'out');
  const logFile = join(dir, 'standin.log');
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  if (opts.standin) Object.assign(env, { PYTHONPATH: STANDIN_DIR, MEMLENS_STANDIN_LOG: logFile });
  const result = spawnSync(
    'node',
    [
      ...NODE_FLAGS,
      CLI,
      'record',
      '--out',
      out,
      ...(opts.recordArgs ?? []),
      '--',
      PYTHON,
      script,
      ...(opts.programArgs ?? []),
    ],
    { encoding: 'utf8', env, cwd: dir },
  );
  return { dir, out, result, memlensLines: memlensLines(result.stderr), log: () => readLog(logFile) };
}

export function memlensLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('memlens record:'));
}

export function readLog(file: string): Record<string, unknown>[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export function manifestOf(out: string): RunManifest {
  return JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as RunManifest;
}

/** `memlens ARGS` on the built CLI, its stdout. */
export function memlens(...args: string[]): string {
  const r = spawnSync('node', [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`memlens ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

export { spawn };

/**
 * A `bin` folder in `dir` to put first on PATH: `memlens` runs the built CLI, as an installed
 * package puts it there, and with `python` also `python` runs PYTHON (Debian's, which has torch).
 */
export function commandsOnPath(dir: string, opts: { python?: boolean } = {}): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const shim = (name: string, command: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec ${command} "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  };
  shim('memlens', `"${process.execPath}" ${NODE_FLAGS.join(' ')} "${CLI}"`);
  if (opts.python) shim('python', PYTHON);
  return bin;
}
