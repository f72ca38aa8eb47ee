import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  createReadStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickleDumps } from '../../src/engine/encode/pickle-writer.js';
import { removeIfInterrupted } from '../../src/node/files/interrupt-cleanup.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { deepStackValue } from '../helpers/deep-stacks.js';

/**
 * Every command that writes a file, interrupted in the middle of writing it with each signal a
 * user or a supervisor sends, leaves neither the output nor its temporary file.
 *
 * "In the middle of writing" is made certain rather than raced: the test knows the temporary
 * file's name (OUT.memlens-PID.tmp) as soon as the command is spawned, puts a FIFO there, reads
 * the first bytes the command writes and then stops reading, so the command is blocked in a
 * write with part of its output written, as on a slow disk, when the signal arrives.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const GENERATE = join(ROOT, 'dist-tools', 'scripts', 'generate.js');
const SIGNALS = [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const;

let dir = '';
let input = '';
let deep = '';

const WRITERS: { name: string; args: (out: string) => string[] }[] = [
  { name: 'slice -o', args: (out) => ['slice', input, '--range', '0:', '-o', out] },
  { name: 'simulate -o', args: (out) => ['simulate', input, '-o', out] },
  // Its profile lists each live stack's frames: deep stacks make it many pipe buffers long.
  { name: 'peak --speedscope', args: (out) => ['peak', deep, '--speedscope', out] },
];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlens-interrupt-'));
  input = join(dir, 'run.pickle');
  // Large enough that every output is several pipe buffers (64 KiB) long.
  execFileSync(process.execPath, [GENERATE, '--events', '40000', '--seed', '3', '--quiet', '--out', input]);
  deep = join(dir, 'deep.pickle');
  writeFileSync(deep, pickleDumps(deepStackValue(50_000)));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Resolves once the command has written its first bytes into `fifo` and is blocked writing more. */
function stallWriter(fifo: string): Promise<{ got: number; stop: () => void }> {
  const reader = createReadStream(fifo, { highWaterMark: 4096 });
  return new Promise((resolve, reject) => {
    reader.once('error', reject);
    reader.once('data', (b) => {
      reader.pause();
      resolve({ got: b.length, stop: () => reader.destroy() });
    });
  });
}

function leftovers(out: string): string[] {
  const base = out.split('/').pop()!;
  return readdirSync(dir).filter((f) => f.startsWith(base));
}

async function noLeftovers(out: string): Promise<string[]> {
  // The clean-up happens as the process dies; give it a moment.
  for (let i = 0; i < 100 && leftovers(out).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  return leftovers(out);
}

describe('an interrupted write leaves neither the output nor a temporary file', () => {
  for (const w of WRITERS) {
    for (const [signal, status] of SIGNALS) {
      it(`${w.name}, ${signal}`, async () => {
        const out = join(dir, `out-${w.name.replace(/\W+/g, '')}-${signal}.bin`);
        // A process group of its own, signalled as a whole: Ctrl+C and a terminal's hang-up reach
        // every process of the foreground group, not the command alone.
        const child = spawn(process.execPath, [...NODE_FLAGS, CLI, ...w.args(out)], {
          stdio: ['ignore', 'ignore', 'pipe'],
          detached: true,
        });
        let stderr = '';
        child.stderr!.on('data', (b: Buffer) => {
          stderr += b.toString();
        });
        const tmp = `${out}.memlens-${child.pid}.tmp`;
        execFileSync('mkfifo', [tmp]);
        const stalled = await stallWriter(tmp);
        expect(stalled.got).toBeGreaterThan(0);
        expect(child.exitCode, 'still writing').toBeNull();
        process.kill(-child.pid!, signal);
        const end = await exited(child);
        stalled.stop();
        // Died of the signal (the shell's $? is 128 + its number) or exited with that code.
        expect(end.signal === signal || end.code === status, JSON.stringify(end)).toBe(true);
        expect(await noLeftovers(out), stderr).toEqual([]);
      }, 30_000);
    }
  }

  it('an uninterrupted write still leaves the output and nothing else', () => {
    for (const w of WRITERS) {
      const out = join(dir, `whole-${w.name.replace(/\W+/g, '')}.bin`);
      const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...w.args(out)], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(statSync(out).size, w.name).toBeGreaterThan(128 << 10);
      expect(leftovers(out), w.name).toEqual([out.split('/').pop()]);
      expect(existsSync(`${out}.memlens-${r.pid}.tmp`)).toBe(false);
    }
  }, 60_000);
});

describe('the clean-up watchdog', () => {
  it('removes its path once the process lets go of it without renaming it', async () => {
    const path = join(dir, 'left-behind.tmp');
    writeFileSync(path, 'half');
    removeIfInterrupted(path)();
    for (let i = 0; i < 100 && existsSync(path); i++) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(path)).toBe(false);
  });
});
