import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { categoriesOf } from '../../src/engine/analyses/categories/category-curves.js';
import { diffSnapshots } from '../../src/engine/analyses/diff/diff.js';
import { peakOf } from '../../src/engine/analyses/peak/peak.js';
import { planSlice } from '../../src/engine/analyses/slice/slice.js';
import { pickleDumps } from '../../src/engine/encode/pickle-writer.js';
import { liveMemoryProfile } from '../../src/engine/export/speedscope.js';
import { flameTree } from '../../src/engine/views/flame/flame-tree.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { DEEP, deepStackValue } from '../helpers/deep-stacks.js';
import { snapshotOf } from '../helpers/snapshot-of.js';

/**
 * Stacks 100,000 frames deep (recursive code, torch.compile graphs, or a hostile file): every
 * analysis that walks stacks or the trees built from them answers, and answers right, instead
 * of throwing "Maximum call stack size exceeded".
 */
const DEPTH = 100_000;
const s = snapshotOf(deepStackValue(DEPTH));
const d = s.devices[0]!;
const PEAK = DEEP.weight + DEEP.scratch + DEEP.grad;
const END = DEEP.weight + DEEP.grad;

describe(`stacks ${DEPTH.toLocaleString('en')} frames deep`, () => {
  it('the model keeps every frame', () => {
    expect(d.totals.peak.allocated).toBe(PEAK);
    const id = d.allocations.ofEntry[0]!;
    expect(s.stacks.stack(d.allocations.stack[id]!).length).toBe(DEPTH + 2);
  });

  it('flame tree: one chain DEPTH deep that splits into the two leaves, with their bytes', () => {
    for (const fullStacks of [false, true]) {
      const t = flameTree(s, d, d.totals.peakAllocatedAt, { fullStacks });
      expect(t.total_bytes).toBe(PEAK);
      expect(t.frame.length).toBe(1 + 1 + DEPTH + 2); // root, main, the recursion, two leaves
      expect(Math.max(...t.depth.subarray(0, 10))).toBe(9);
      expect(t.size[0]).toBe(t.frame.length);
      const leaves = [...t.frame.keys()].filter((i) => t.size[i] === 1);
      expect(leaves.map((i) => t.frames[t.frame[i]!]!.name)).toEqual(['make_weight', 'make_grad']);
      expect(leaves.map((i) => t.bytes[i])).toEqual([DEEP.weight + DEEP.scratch, DEEP.grad]);
      expect(leaves.map((i) => t.depth[i])).toEqual([DEPTH + 2, DEPTH + 2]);
      // Every inner node holds both leaves' bytes.
      expect(t.bytes[DEPTH]).toBe(PEAK);
    }
  });

  it('peak: the two sites with their bytes and their whole stacks', () => {
    const p = peakOf(s, d, { fullStacks: true });
    expect(p.allocated_bytes).toBe(PEAK);
    expect(p.groups.map((g) => [g.bytes, g.frames.length])).toEqual([
      [DEEP.weight + DEEP.scratch, DEPTH + 2],
      [DEEP.grad, DEPTH + 2],
    ]);
  });

  it('diff of the file with itself: the same sites, no difference', () => {
    const r = diffSnapshots(s, s, s.devices, s.devices, { fullStacks: true });
    const dev = r.devices[0]!;
    expect(dev.at_dump.a_bytes).toBe(END);
    expect(dev.at_dump.delta_bytes).toBe(0);
    expect(dev.at_dump.matching.same_frames).toBe(2);
    expect(dev.at_peak.sites).toEqual([]);
  });

  it('categories: every byte in one category, at the peak and at the dump', () => {
    const r = categoriesOf(s, d, 10);
    expect(r.categories.reduce((n, c) => n + c.peak_bytes, 0)).toBe(PEAK);
    expect(r.categories.reduce((n, c) => n + c.dump_bytes, 0)).toBe(END);
  });

  it('speedscope: one sample per stack, outermost first, weighted by bytes', () => {
    const p = liveMemoryProfile(s, d, d.totals.peakAllocatedAt, 'deep');
    const prof = p.profiles[0]!;
    expect(prof.weights).toEqual([DEEP.weight + DEEP.scratch, DEEP.grad]);
    expect(prof.samples.map((x) => x.length)).toEqual([DEPTH + 2, DEPTH + 2]);
    expect(p.shared.frames[prof.samples[0]![0]!]!.name).toBe('main');
    expect(p.shared.frames[prof.samples[1]![DEPTH + 1]!]!.name).toBe('make_grad');
  });

  it('slice: the window written and read back keeps the deep stacks and the live bytes', () => {
    const plan = planSlice(s, s.devices, { by: 'entries', from: 1, to: Infinity });
    const back = snapshotOf(plan.value);
    const b = back.devices[0]!;
    expect(b.trace.length).toBe(4);
    expect(b.totals.end.allocated).toBe(END);
    const id = b.allocations.ofEntry[1]!;
    expect(back.stacks.stack(b.allocations.stack[id]!).length).toBe(DEPTH + 2);
  });
});

/** Past the ~120,000 arguments a spread call (push(...frames)) takes before it overflows. */
const WIDE = 150_000;

describe(`stacks of ${WIDE.toLocaleString('en')} distinct frames (a frame table as deep)`, () => {
  const value = deepStackValue(WIDE, { distinctFrames: true });
  const s = snapshotOf(value);
  const d = s.devices[0]!;

  it('flame tree and speedscope list every frame once', () => {
    const t = flameTree(s, d, d.totals.peakAllocatedAt, { fullStacks: true });
    expect(t.frames.length).toBe(WIDE + 3); // main, the levels, two leaves
    const p = liveMemoryProfile(s, d, d.totals.peakAllocatedAt, 'deep');
    expect(p.shared.frames.length).toBe(WIDE + 3);
  });

  it('memlens peak --speedscope writes the profile (built CLI)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memlens-deep-'));
    try {
      writeFileSync(join(dir, 'deep.pickle'), pickleDumps(value));
      const out = join(dir, 'deep.speedscope.json');
      const cli = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
      const r = spawnSync(
        process.execPath,
        [...NODE_FLAGS, cli, 'peak', join(dir, 'deep.pickle'), '--speedscope', out],
        {
          encoding: 'utf8',
        },
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const file = JSON.parse(readFileSync(out, 'utf8'));
      expect(file.shared.frames.length).toBe(WIDE + 3);
      expect(file.profiles[0].weights).toEqual([DEEP.weight + DEEP.scratch, DEEP.grad]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
