import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../../scripts/synth/index.js';
import { groupBursts, type PatternInput } from '../../../../src/engine/analyses/gc/burst-patterns.js';
import { gcBurstsOf } from '../../../../src/engine/analyses/gc/gc-bursts.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { Action } from '../../../../src/engine/model/trace-columns.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
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
      // One collection on a schedule: one pattern holding every burst, nothing apart.
      expect(r.patterns).toHaveLength(1);
      expect(r.outliers).toEqual([]);
      const [p] = r.patterns;
      expect(p!.count).toBe(planted.bursts.length);
      expect(p!.period_iterations).toBe(options.gcEvery);
      expect(p!.regular).toBe(true);
      expect(p!.through_gc).toBe(p!.count);
      expect(p!.first_entry).toBe(planted.bursts[0]!.entry);
      expect(p!.total_bytes).toBe(planted.bursts.reduce((n, b) => n + b.bytes, 0));
      expect(p!.bytes.min).toBe(Math.min(...planted.bursts.map((b) => b.bytes)));
      expect(p!.bytes.max).toBe(Math.max(...planted.bursts.map((b) => b.bytes)));
    });
  }
});

describe('gc bursts grouped into patterns', () => {
  const burst = (entry: number, key: string, bytes: number): PatternInput => ({
    key,
    entry,
    last_entry: entry + 3,
    time_us: 1_000_000 + entry * 10,
    iteration: Math.floor(entry / 100),
    count: 4,
    bytes,
    through_gc: true,
    free_frames: [],
    groups: [],
    other_groups: 0,
  });
  it('a schedule is one pattern; a burst of another site, or of a very different size, stands apart', () => {
    const bursts = Array.from({ length: 10 }, (_, k) => burst(500 * k, 'a|1', 1000 + k));
    bursts.splice(4, 0, burst(2100, 'b|2', 1000));
    bursts.splice(8, 0, burst(3600, 'a|1', 50_000));
    const g = groupBursts(bursts);
    expect(g.patterns).toHaveLength(1);
    expect(g.patterns[0]!.count).toBe(10);
    expect(g.patterns[0]!.period_entries).toBe(500);
    expect(g.patterns[0]!.period_iterations).toBe(5);
    expect(g.patterns[0]!.period_us).toBe(5000);
    expect(g.patterns[0]!.regular).toBe(true);
    expect(g.patterns[0]!.bytes).toEqual({ min: 1000, median: 1005, max: 1009 });
    expect(g.outliers).toEqual([4, 8]);
  });
  it('two repeats are not a pattern; uneven gaps are said to be irregular', () => {
    expect(groupBursts([burst(0, 'a', 1), burst(10, 'a', 1)]).outliers).toEqual([0, 1]);
    const uneven = [0, 100, 150, 400, 420].map((e) => burst(e, 'a', 1));
    expect(groupBursts(uneven).patterns[0]!.regular).toBe(false);
  });
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
  const long = join(dir, 'long.pickle');
  writeFileSync(
    long,
    generateSnapshotBytes({ events: 120_000, seed: 3, cycleBytes: [4 * MiB, 4 * MiB], gcEvery: 3 }).bytes,
  );
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'gc', ...args], { encoding: 'utf8', timeout: 60_000 });

  it('prints the bursts as text, naming the garbage collector', () => {
    const r = run(file);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/bursts free long-lived allocations at once, every ~3 iterations/);
    expect(r.stdout).toMatch(/through the garbage collector/);
  });

  it("prints a long run's collections once, as a pattern, with times into the trace", () => {
    const r = run(long);
    expect(r.status).toBe(0);
    const dev = JSON.parse(run(long, '--json').stdout).files[0].devices[0];
    expect(dev.bursts.length).toBeGreaterThan(20);
    // Sentences wrap at 100 columns when piped: read them whole.
    const flat = r.stdout.replace(/\n +/g, ' ');
    expect(flat).toMatch(
      new RegExp(
        `${dev.bursts.length} bursts every ~3 iterations \\(~[\\d.]+ ms\\), entries [\\d,]+–[\\d,]+ \\([\\d.]+ (ms|s)–[\\d.]+ s into the trace\\): 6 allocations, 24.0 MiB each`,
      ),
    );
    expect(r.stdout).not.toMatch(/burst at /);
    expect(r.stdout).not.toMatch(/time_us|\d{13}/);
    expect(r.stdout.split('\n').length).toBeLessThan(25);
  });

  it('prints JSON with the documented keys', () => {
    const r = run(file, '--json', '--device', '0');
    expect(r.status).toBe(0);
    const dev = JSON.parse(r.stdout).files[0].devices[0];
    expect(dev.period_iterations).toBe(3);
    expect(dev.patterns[0]).toMatchObject({ count: dev.bursts.length, period_iterations: 3, regular: true });
    expect(dev.trace_start_us).toBeGreaterThan(0);
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

describe('bursts that code freed, told by the frees’ own stacks (real H200 recordings)', () => {
  const RECORDED = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'recorded');
  const load = (file: string) => loadSnapshotBytes(readFileSync(join(RECORDED, file)));
  const streams = 'streams/step5/torch_memory_rank0_pid493.pickle';

  it('zero_grad dropping the gradients is code, when frees record their own stacks', () => {
    const s = load(streams);
    const [burst] = gcBurstsOf(s, s.devices[0]!).bursts;
    expect(burst!.freed_by_code).toBe('zero_grad dropping the gradients');
  });

  it('recorded with context="alloc" (each free carries its allocation’s stack), the frames tell nothing', () => {
    // The collector's frees of seed 001's cycles, as context="alloc" would have recorded them: each
    // free with its block's allocation context (PyTorch's free(): `context ? context :
    // block->context_when_allocated`), none for tensors made before the window or on autograd's thread.
    const s = load('cycle/step11/torch_memory_rank0_pid529.pickle');
    const d = s.devices[0]!;
    const t = d.trace;
    const a = d.allocations;
    for (let i = 0; i < t.length; i++) {
      const id = a.ofEntry[i]!;
      if (id >= 0 && (t.action[i] === Action.free_requested || t.action[i] === Action.free_completed))
        t.stack[i] = a.start[id]! >= 0 ? a.stack[id]! : -1;
    }
    const [burst] = gcBurstsOf(s, d).bursts;
    expect(burst!.bytes).toBe(9 * 4 * MiB);
    expect(burst!.freed_by_code).toBeNull();
  });
});
