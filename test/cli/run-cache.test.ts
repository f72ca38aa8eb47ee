/**
 * The result cache never lies: entries corrupted, truncated, swapped between files, re-shaped or
 * written by another memlens, and snapshots rewritten in place with their size and mtime put
 * back, always give the figures of `memlens run --no-cache`; each doubt is said on stderr.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/generate.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { writeGeneratedRun } from '../helpers/generated-run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const work = mkdtempSync(join(tmpdir(), 'memlens-run-cache-'));
const cacheHome = join(work, 'cache');
afterAll(() => rmSync(work, { recursive: true, force: true }));

const MiB = 2 ** 20;
const root = join(work, 'run');
writeGeneratedRun(root, {
  ranks: 3,
  windows: 3,
  seed: 7,
  extraBuffer: { rank: 1, bytes: 256 * MiB, step: 2 },
});
// One file above the size that is always hashed: it is found by size, mtime and inode. JSON, so a
// figure can be changed in place (its first entry's time).
const large = join(root, 'step3', 'torch_memory_rank3_pid40003.pickle');
writeFileSync(large, generateSnapshotBytes({ events: 2000, seed: 9, format: 'json' }).bytes);

function memlens(...args: string[]) {
  const r = spawnSync('node', [...NODE_FLAGS, CLI, 'run', root, '--json', ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    maxBuffer: 64 * MiB,
  });
  return { status: r.status, json: r.status === 0 ? JSON.parse(r.stdout) : r.stdout, stderr: r.stderr };
}

const truth = () => memlens('--no-cache').json;

/** The cache's entry files (not its index). */
function entries(): string[] {
  const base = join(cacheHome, 'memlens');
  const dir = readdirSync(base).find((d) => d.startsWith('cell-'))!;
  return readdirSync(join(base, dir))
    .filter((f) => f.endsWith('.json') && f !== 'index.json')
    .map((f) => join(base, dir, f));
}

/** The entry holding a figure that shows in the run's JSON. */
const withFigure = () => entries().find((f) => /"allocated_bytes":\d/.test(readFileSync(f, 'utf8')))!;

/** Rewrites a file's bytes in place, then puts its size and mtime back (its inode never changes). */
function rewriteInPlace(file: string, edit: (b: Buffer) => Buffer): void {
  const st = statSync(file);
  const stamp = join(work, 'stamp');
  writeFileSync(stamp, '');
  // touch -r copies the times to the nanosecond; utimes from JS numbers may round them.
  spawnSync('touch', ['-r', file, stamp]);
  const bytes = edit(readFileSync(file));
  expect(bytes.length).toBe(st.size);
  writeFileSync(file, bytes);
  spawnSync('touch', ['-r', stamp, file]);
  expect(statSync(file)).toMatchObject({ size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
}

/** The same length, another site name: the run's blame shows which bytes were read. */
const renameSite = (b: Buffer) =>
  Buffer.from(b.toString('latin1').replaceAll('allocate_rank_buffer', 'allocate_rank_bufxer'), 'latin1');

describe('memlens run: the result cache is checked, never trusted blindly', () => {
  beforeEach(() => {
    rmSync(cacheHome, { recursive: true, force: true });
    const first = memlens();
    expect(first.status).toBe(0);
    expect(first.json).toEqual(truth());
  });

  const damaged: [string, () => void][] = [
    [
      'an entry with one digit changed',
      () => {
        const f = withFigure();
        const text = readFileSync(f, 'utf8');
        writeFileSync(
          f,
          text.replace(/("allocated_bytes":)(\d)/, (_, k, d) => `${k}${(Number(d) + 1) % 10}`),
        );
      },
    ],
    [
      'a truncated entry',
      () => {
        const f = withFigure();
        const text = readFileSync(f, 'utf8');
        writeFileSync(f, text.slice(0, text.length >> 1));
      },
    ],
    [
      'two entries swapped',
      () => {
        const [a, b] = entries();
        const [ta, tb] = [readFileSync(a!), readFileSync(b!)];
        writeFileSync(a!, tb);
        writeFileSync(b!, ta);
      },
    ],
    [
      'an entry of the wrong shape',
      () => {
        for (const f of entries())
          writeFileSync(f, readFileSync(f, 'utf8').replace(/"devices":\[/g, '"devices":{"x":['));
      },
    ],
    [
      'an entry written by another memlens version',
      () => {
        for (const f of entries())
          writeFileSync(f, readFileSync(f, 'utf8').replace(/"0\.\d+\.\d+"/, '"0.0.0-other"'));
      },
    ],
  ];
  for (const [what, damage] of damaged) {
    it(`${what}: recomputed and said on stderr in one line`, () => {
      damage();
      const r = memlens();
      expect(r.status).toBe(0);
      expect(r.json).toEqual(truth());
      const said = r.stderr.split('\n').filter((l) => l.includes('cache'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^memlens: cache: \d+ entr(y|ies) not trusted, decoded again: /);
      // Recomputed entries are whole again: the next run says nothing.
      expect(memlens()).toMatchObject({ json: truth(), stderr: '' });
    });
  }

  it('a small snapshot rewritten in place with its size, mtime and inode kept: the new bytes count', () => {
    const file = join(root, 'step2', 'torch_memory_rank1_pid40001.pickle');
    const before = truth();
    rewriteInPlace(file, renameSite);
    const now = truth();
    expect(now).not.toEqual(before);
    expect(JSON.stringify(now)).toContain('allocate_rank_bufxer');
    expect(memlens().json).toEqual(now);
  });

  it('a large one: trusted by size, mtime and inode, unless --verify-cache', () => {
    expect(statSync(large).size).toBeGreaterThan(4 * MiB);
    const before = truth();
    rewriteInPlace(large, (b) =>
      Buffer.from(b.toString('latin1').replace('"time_us":17', '"time_us":16'), 'latin1'),
    );
    const now = truth();
    expect(now).not.toEqual(before);
    expect(memlens('--verify-cache').json).toEqual(now);
    expect(memlens().json).toEqual(now);
  });

  it('a large file refused at its first byte is read to its end and remembered by its whole content', () => {
    const junk = join(root, 'step2', 'torch_memory_rank4_pid40004.pickle');
    writeFileSync(junk, Buffer.alloc(5 * MiB, 'x'));
    try {
      const before = entries().length;
      const said = (s: string) => s.split('\n').filter((l) => l.startsWith(`memlens: ${junk}: not a pickle`));
      expect(said(memlens().stderr)).toHaveLength(1);
      expect(entries()).toHaveLength(before + 1);
      expect(said(memlens().stderr)).toHaveLength(1);
      expect(entries()).toHaveLength(before + 1);
    } finally {
      rmSync(junk);
    }
  });

  it('a broken snapshot: its failure is remembered by content and said on every run', () => {
    const broken = join(root, 'step1', 'torch_memory_rank2_pid40002.pickle');
    const bytes = readFileSync(broken);
    writeFileSync(broken, bytes.subarray(0, bytes.length - 10));
    const errorLine = (s: string) => s.split('\n').filter((l) => l.startsWith(`memlens: ${broken}: `));
    const before = entries().length;
    const first = memlens();
    expect(first.status).toBe(2);
    expect(errorLine(first.stderr)).toHaveLength(1);
    // Remembered: one more entry, holding the reason.
    expect(entries()).toHaveLength(before + 1);
    const reason = errorLine(first.stderr)[0]!.slice(`memlens: ${broken}: `.length);
    expect(entries().some((f) => readFileSync(f, 'utf8').includes(JSON.stringify({ error: reason })))).toBe(
      true,
    );
    const again = memlens();
    expect(again.status).toBe(2);
    expect(errorLine(again.stderr)).toEqual(errorLine(first.stderr));
    expect(entries()).toHaveLength(before + 1);
    writeFileSync(broken, bytes);
  });
});
