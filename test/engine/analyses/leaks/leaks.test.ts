import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../../scripts/synth/index.js';
import { leaksOf } from '../../../../src/engine/analyses/leaks/leaks.js';
import { unreleasedIn } from '../../../../src/engine/analyses/leaks/unreleased.js';
import { findIterations } from '../../../../src/engine/derived/iterations/iterations.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const MiB = 1024 * 1024;

function planted(options: WriteOptions) {
  const r = generateSnapshotBytes(options);
  const s = loadSnapshotBytes(r.bytes);
  return { s, facts: r.expected.planted, bytes: r.bytes };
}

describe('leaks: a tensor kept every step (planted)', () => {
  for (const [name, extra] of [
    ['plain', {}],
    ['two streams, expandable segments', { streams: 2, expandableSegments: true }],
  ] as [string, WriteOptions][]) {
    it(`finds the site, the bytes per iteration and the iterations: ${name}`, () => {
      const leak = 3 * MiB + 512;
      const { s, facts } = planted({ events: 20_000, seed: 41, leakBytes: leak, ...extra });
      const d = s.devices[0]!;
      const fact = facts![0]!;
      const r = leaksOf(s, d);
      expect(r.iterations.source).toBe('profiler steps');
      expect(r.iterations.count).toBe(fact.iterations);
      const [top] = r.groups;
      expect(top!.accumulating).toBe(true);
      expect(top!.bytes_per_iteration).toBe(leak);
      expect(top!.frames[0]).toMatchObject({ name: 'train_step', line: 218 });
      expect(top!.frames[0]!.filename).toMatch(/train\.py$/);
      // The last step may be cut short by the dump: steps are judged once the next one ended.
      const judged = fact.leakIterations.filter((k) => k + 1 < fact.iterations - 1);
      expect(top!.iterations).toEqual(judged);
      expect(top!.held_bytes).toBe(judged.length * leak);
      expect(r.groups.filter((g) => g.accumulating)).toHaveLength(1);
      expect(r.verdict).toMatch(/train_step .*train\.py:218\) grows by 3\.00 MiB per iteration/);
      // The oldest and newest held allocations: alloc entries of the planted size, in trace order.
      const [oldest, newest] = top!.held_examples;
      expect(oldest!.entry).toBeLessThan(newest!.entry);
      for (const ex of [oldest!, newest!]) {
        expect(d.trace.size[ex.entry]).toBe(leak);
        expect(d.allocations.ofEntry[ex.entry]).toBe(ex.allocation);
      }
    });
  }

  it('finds the same leak when iterations come from a --marker frame or from periodicity', () => {
    const leak = 2 * MiB;
    const { s, facts } = planted({ events: 20_000, seed: 42, leakBytes: leak, noTimeUs: true });
    const d = s.devices[0]!;
    for (const r of [leaksOf(s, d, { marker: 'get_batch' }), leaksOf(s, d)]) {
      expect(r.iterations.source).toMatch(/frame|periodicity/);
      expect(Math.abs(r.iterations.count - facts![0]!.iterations)).toBeLessThanOrEqual(1);
      expect(r.groups[0]!.accumulating).toBe(true);
      expect(r.groups[0]!.bytes_per_iteration).toBe(leak);
      expect(r.groups[0]!.frames[0]!.line).toBe(218);
    }
  });
});

describe('leaks: a clean training loop reports none', () => {
  const clean: [string, WriteOptions][] = [
    ['seed 1', { seed: 1 }],
    ['seed 2, three streams', { seed: 2, streams: 3 }],
    ['seed 3, expandable segments', { seed: 3, expandableSegments: true }],
    ['seed 4, ring buffer overflowed', { seed: 4, ringBufferOverflow: true }],
    ['seed 5, pending frees and a private pool', { seed: 5, pendingFrees: true, privatePool: true }],
    ['seed 6, no time_us (periodicity)', { seed: 6, noTimeUs: true }],
  ];
  for (const [name, options] of clean) {
    it(name, () => {
      const s = loadSnapshotBytes(generateSnapshotBytes({ events: 25_000, ...options }).bytes);
      for (const d of s.devices) {
        const r = leaksOf(s, d);
        expect(r.iterations.count).toBeGreaterThan(5);
        expect(r.groups.filter((g) => g.accumulating)).toEqual([]);
        expect(r.verdict).toMatch(/^no accumulating allocations found over \d+ iterations$/);
        // AdamW state is held since the first step, and is not a leak.
        if (!options.ringBufferOverflow) expect(r.groups[0]!.iterations).toEqual([0]);
      }
    });
  }
});

describe('unreleased in range', () => {
  it('what one step left behind, the same by entries and by time', () => {
    const { s } = planted({ events: 20_000, seed: 43, leakBytes: MiB });
    const d = s.devices[0]!;
    const it = findIterations(s, d);
    const k = 4;
    const u = unreleasedIn(s, d, { entries: [it.start[k]!, it.end[k]! - 1] }, { top: 100 });
    const leakGroup = u.groups.find((g) => g.frames[0]?.line === 218);
    expect(leakGroup).toMatchObject({ count: 1, bytes: MiB });
    // Counted independently: allocs in the window whose user free comes after it.
    const a = d.allocations;
    let count = 0;
    for (let id = 0; id < a.count; id++) {
      const freed = a.freeRequested[id]! >= 0 ? a.freeRequested[id]! : a.end[id]!;
      if (a.start[id]! >= it.start[k]! && a.start[id]! < it.end[k]! && freed >= it.end[k]!) count++;
    }
    expect(u.count).toBe(count);
    const byTime = unreleasedIn(s, d, {
      timeUs: [d.trace.timeUs[u.from_entry]!, d.trace.timeUs[u.to_entry]!],
    });
    expect(byTime.count).toBe(u.count);
    expect(byTime.bytes).toBe(u.bytes);
  });
});

describe.skipIf(corpus.length === 0)('leaks on the real corpus', () => {
  it('runs on every file; single-step recordings get no invented iterations', () => {
    for (const file of corpus) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        const r = leaksOf(s, d);
        expect(r.verdict.length, file).toBeGreaterThan(0);
        expect(
          r.groups.filter((g) => g.accumulating),
          file,
        ).toEqual([]);
        for (const g of r.groups) expect(g.held_bytes, file).toBeLessThanOrEqual(g.bytes);
      }
    }
    // One optimizer step recorded: a regular site is an inner loop (layers, parameters), not a step.
    const single = corpus.find((f) => f.startsWith('bcrafton_'));
    if (single) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, single))));
      expect(leaksOf(s, s.devices[0]!).iterations.marker).toMatch(/one 'Optimizer\.step#…' annotation/);
    }
  });
});

describe.skipIf(corpus.length === 0)('leaks without iterations on the real corpus', () => {
  it('says no markers were found (not "no leaks"), what was tried, and how to give them', () => {
    let withoutIterations = 0;
    for (const file of corpus) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        const r = leaksOf(s, d);
        if (r.iterations.count > 0) continue;
        withoutIterations++;
        expect(r.verdict, file).not.toMatch(/none were found/);
        if (d.trace.length === 0) {
          expect(r.no_trace, file).toBe(true);
          expect(r.verdict, file).toMatch(/^no trace recorded, so leaks cannot be judged/);
          continue;
        }
        expect(r.verdict, file).toMatch(
          /^no iteration markers found, so leaks were not judged: this does not mean there are none/,
        );
        // Each way of finding steps that was tried is named with what it found.
        expect(r.iterations.tried.length, file).toBeGreaterThan(0);
        expect(r.iterations.tried.join('\n'), file).toMatch(
          /ProfilerStep#N annotations: |'Optimizer\.step#…' annotations: one/,
        );
        if (!/one '/.test(r.iterations.marker))
          expect(r.iterations.tried.join('\n'), file).toMatch(
            /a call site that allocates once per step at a regular interval: /,
          );
      }
    }
    expect(withoutIterations).toBeGreaterThan(10);
  });

  it('the CLI names the options that give iterations', () => {
    const file = corpus.find((f) => f.startsWith('MAGMA27_'));
    if (!file) return;
    const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'leaks', join(CORPUS, file)], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /iterations: none found\n {4}tried ProfilerStep#N annotations: the file has no annotations/,
    );
    expect(r.stdout).toMatch(/no iteration markers found/);
    expect(r.stdout).toMatch(/--marker NAME .*function called once per step/);
    expect(r.stdout).toMatch(/--range A:B .*still held after B \(20,047:30,000\)/);
    expect(r.stdout).not.toMatch(/none were found/);
  });
});

describe('memlens leaks (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-leaks-'));
  const file = join(dir, 'leak.pickle');
  writeFileSync(file, planted({ events: 15_000, seed: 44, leakBytes: MiB }).bytes);
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'leaks', ...args], {
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints the verdict and the leaking site as text', () => {
    const r = run(file);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/grows by 1\.00 MiB per iteration/);
    expect(r.stdout).toMatch(/leak .*1\.00 MiB/);
  });

  it('prints JSON with the documented keys, and the window with --range', () => {
    const r = run(file, '--json', '--range', '1000:5000');
    expect(r.status).toBe(0);
    const dev = JSON.parse(r.stdout).files[0].devices[0];
    expect(dev.groups[0]).toMatchObject({ accumulating: true, bytes_per_iteration: MiB });
    expect(dev.groups[0].frames[0]).toMatchObject({ name: 'train_step', line: 218 });
    expect(dev.unreleased).toMatchObject({ from_entry: 1000, to_entry: 5000 });
    expect(dev.iterations.source).toBe('profiler steps');
  });

  it('a window given as printed ("1,000:5,000") is reported with times into the trace, not epoch µs', () => {
    const r = run(file, '--range', '1,000:5,000');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /unreleased in entries 1,000–5,000 \([\d.]+ (µs|ms|s)–[\d.]+ (ms|s) into the trace\)/,
    );
    expect(r.stdout).not.toMatch(/time_us \d/);
  });

  it('bad input: one line naming the file, exit 2', () => {
    const bad = join(dir, 'bad.pickle');
    writeFileSync(bad, 'not a pickle at all');
    const r = run(bad);
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`^memlens: ${bad}: `));
  });
});
