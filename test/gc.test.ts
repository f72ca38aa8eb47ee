import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../src/cli/node-flags.js';
import { gcBurstsOf } from '../src/engine/analyses/gc/gc-bursts.js';
import { loadSnapshotBytes } from '../src/engine/load.js';
import { generateSnapshotBytes, type WriteOptions } from '../src/engine/synth/index.js';

const CORPUS = join(import.meta.dirname, '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const MiB = 1024 * 1024;

describe('gc bursts: reference cycles collected every K steps (planted)', () => {
  const cases: [string, WriteOptions][] = [
    ['K=4, two tensors a step', { seed: 51, cycleBytes: [2 * MiB, 3 * MiB + 100], gcEvery: 4 }],
    [
      'K=3, with a leak, three streams',
      { seed: 52, cycleBytes: [MiB, MiB, 4096], gcEvery: 3, leakBytes: MiB, streams: 3 },
    ],
    [
      'K=5, expandable segments',
      { seed: 53, cycleBytes: [8 * MiB], gcEvery: 5, expandableSegments: true, events: 60_000 },
    ],
  ];
  for (const [name, options] of cases) {
    it(`finds every collection with its entry, time, count, bytes and period: ${name}`, () => {
      const g = generateSnapshotBytes({ events: 25_000, ...options });
      const s = loadSnapshotBytes(g.bytes);
      const planted = g.expected.planted![0]!;
      const r = gcBurstsOf(s, s.devices[0]!);
      expect(planted.bursts.length).toBeGreaterThan(1);
      expect(r.bursts.map((b) => [b.entry, b.time_us, b.count, b.bytes, b.iteration])).toEqual(
        planted.bursts.map((p) => [p.entry, p.timeUs, p.count, p.bytes, p.iteration]),
      );
      expect(r.period_iterations).toBe(options.gcEvery);
      for (const b of r.bursts) {
        expect(b.through_gc).toBe(true);
        expect(b.free_frames[0]).toMatchObject({ name: 'train_step', line: 207 });
        expect(b.groups).toHaveLength(1);
        expect(b.groups[0]!.frames[0]).toMatchObject({ name: 'forward', line: 176 });
        // Tensors of the K steps since the last collection: the oldest had lived K steps.
        expect(b.lived_iterations).toMatchObject({ min: 1, max: options.gcEvery });
      }
      expect(r.verdict).toMatch(/garbage collector/);
    });
  }
});

describe('gc bursts: a clean loop has none', () => {
  const clean: [string, WriteOptions][] = [
    ['seed 1', { seed: 1 }],
    ['seed 7, two streams, expandable segments', { seed: 7, streams: 2, expandableSegments: true }],
    ['seed 8, ring buffer overflowed', { seed: 8, ringBufferOverflow: true }],
    ['seed 9, pending frees, private pool', { seed: 9, pendingFrees: true, privatePool: true }],
    ['seed 10, no time_us (periodicity)', { seed: 10, noTimeUs: true }],
    ['seed 11, a leak but no cycles', { seed: 11, leakBytes: MiB }],
  ];
  for (const [name, options] of clean) {
    it(name, () => {
      const s = loadSnapshotBytes(generateSnapshotBytes({ events: 25_000, ...options }).bytes);
      for (const d of s.devices) {
        const r = gcBurstsOf(s, d);
        expect(r.iterations.count).toBeGreaterThan(5);
        // zero_grad frees every gradient at once, but they are one step old: not a burst.
        expect(r.bursts).toEqual([]);
        expect(r.verdict).toMatch(/^no burst of long-lived frees over \d+ iterations/);
      }
    });
  }
});

describe.skipIf(corpus.length === 0)('gc bursts on the real corpus', () => {
  it('runs on every file; what it finds is long-lived frees from code, not the collector', () => {
    for (const file of corpus) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        const r = gcBurstsOf(s, d);
        for (const b of r.bursts) {
          expect(b.long_lived, file).toBeGreaterThanOrEqual(r.min_count);
          expect(b.count, file).toBeGreaterThanOrEqual(b.long_lived);
          expect(
            b.groups.reduce((n, g) => n + g.bytes, 0),
            file,
          ).toBeLessThanOrEqual(b.bytes);
          expect(b.through_gc, file).toBe(false);
        }
      }
    }
    // slime's Megatron init copies parameters into contiguous buffers and frees the originals at once.
    const slime = corpus.find((f) => f.startsWith('THUDM_slime__'));
    if (slime) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, slime))));
      const [burst] = gcBurstsOf(s, s.devices[0]!).bursts;
      expect(burst!.free_frames[0]!.filename).toMatch(/param_and_grad_buffer\.py$/);
    }
  });
});

describe('memlens gc (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-gc-'));
  const file = join(dir, 'cycles.pickle');
  writeFileSync(
    file,
    generateSnapshotBytes({ events: 40_000, seed: 54, cycleBytes: [4 * MiB, 4 * MiB], gcEvery: 3 }).bytes,
  );
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'gc', ...args], { encoding: 'utf8', timeout: 60_000 });

  it('prints the bursts as text, naming the garbage collector', () => {
    const r = run(file);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/bursts free long-lived allocations at once, every ~3 iterations/);
    expect(r.stdout).toMatch(/through the garbage collector/);
  });

  it('prints JSON with the documented keys', () => {
    const r = run(file, '--json', '--device', '0');
    expect(r.status).toBe(0);
    const dev = JSON.parse(r.stdout).files[0].devices[0];
    expect(dev.period_iterations).toBe(3);
    expect(dev.bursts[0]).toMatchObject({ count: 6, bytes: 24 * MiB, through_gc: true });
    expect(dev.bursts[0].groups[0].frames[0]).toMatchObject({ name: 'forward', line: 176 });
  });

  it('a device the file lacks: one line naming the file, exit 2', () => {
    const r = run(file, '--device', '3');
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`^memlens: ${file}: has no device 3`));
  });
});
