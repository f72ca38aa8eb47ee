import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'memlens-pipes-'));
const file = join(dir, 'cycles.pickle');
writeFileSync(
  file,
  generateSnapshotBytes({ events: 30_000, seed: 61, cycleBytes: [2 * MiB, 2 * MiB], gcEvery: 3 }).bytes,
);
/** Several files, so text reports keep writing after the reader has gone. */
const files = Array.from({ length: 30 }, () => file);

interface Ended {
  code: number | null;
  stderr: string;
  read: string;
}

/**
 * Runs the CLI into `head` in a real shell pipeline (`memlens ARGS | head -1`), as a user would:
 * head exits after its line and the pipe closes under the CLI. Returns the CLI's own exit status.
 */
function readOneLine(args: string[], head = ['-1']): Ended {
  const r = spawnSync(
    'bash',
    [
      '-c',
      `"$@" | head ${head.join(' ')}; exit "\${PIPESTATUS[0]}"`,
      'pipeline',
      process.execPath,
      ...NODE_FLAGS,
      CLI,
      ...args,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  return { code: r.status, stderr: r.stderr, read: r.stdout };
}

describe('a reader that goes away after one line: every command ends quietly', () => {
  const families: [string, string[]][] = [
    ['summary (text, several files)', ['summary', ...files, ...files, ...files]],
    ['peak --json', ['peak', ...files.slice(0, 10), '--json']],
    ['leaks', ['leaks', ...files]],
    ['gc', ['gc', ...files]],
    ['gc --json', ['gc', ...files, '--json']],
    ['frag', ['frag', ...files]],
    ['categories', ['categories', ...files]],
    ['oom', ['oom', ...files]],
    ['diff', ['diff', file, file]],
    ['events --format csv (streamed)', ['events', file, '--format', 'csv']],
    ['events --format json (streamed)', ['events', file, '--format', 'json']],
    ['blocks (streamed)', ['blocks', file]],
  ];
  it('peak --json | head -c 100', () => {
    const r = readOneLine(['peak', ...files.slice(0, 10), '--json'], ['-c', '100']);
    expect(r.read).toHaveLength(100);
    expect([0, 141]).toContain(r.code);
    expect(r.stderr).toBe('');
  });
  for (const [name, args] of families) {
    it(name, () => {
      const r = readOneLine(args);
      expect(r.read.length).toBeGreaterThan(0);
      expect([0, 141]).toContain(r.code);
      expect(r.stderr).toBe('');
    });
  }
});

/** Runs the CLI with stdout on /dev/full, where every write fails with ENOSPC. */
function intoFullDevice(args: string[]): Ended {
  const r = spawnSync(
    'bash',
    ['-c', '"$@" > /dev/full', 'full', process.execPath, ...NODE_FLAGS, CLI, ...args],
    {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, XDG_CACHE_HOME: join(dir, 'cache') },
    },
  );
  return { code: r.status, stderr: r.stderr, read: r.stdout };
}

describe.skipIf(!existsSync('/dev/full'))('a stdout that fails (/dev/full): one line, a failure', () => {
  const run = join(dir, 'run');
  mkdirSync(join(run, 'step1'), { recursive: true });
  copyFileSync(file, join(run, 'step1', 'torch_memory_rank0_pid1.pickle'));
  const families: [string, string[]][] = [
    ['report -o -', ['report', file, '-o', '-']],
    ['sql', ['sql', 'select 42', file]],
    ['run', ['run', run]],
    ['summary', ['summary', file]],
    ['summary --json', ['summary', file, '--json']],
    ['events --format csv (streamed)', ['events', file, '--format', 'csv']],
  ];
  for (const [name, args] of families) {
    it(name, () => {
      const r = intoFullDevice(args);
      expect(r.stderr).toBe('memlens: cannot write the output to stdout (ENOSPC)\n');
      expect(r.code).toBe(1);
    });
  }
});
