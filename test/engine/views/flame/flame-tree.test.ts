import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import {
  allocationsUnder,
  flameTree,
  NO_STACK_FRAME,
  ROOT_FRAME,
} from '../../../../src/engine/views/flame/flame-tree.js';

const MiB = 1024 * 1024;

describe('flame tree of live memory', () => {
  const leak = 3 * MiB + 512;
  const r = generateSnapshotBytes({ events: 12_000, seed: 71, leakBytes: leak });
  const s = loadSnapshotBytes(r.bytes);
  const d = s.devices[0]!;
  const facts = r.expected.planted![0]!;

  it('holds the planted peak at its root, and every subtree sums its children and own allocations', () => {
    for (const full of [false, true]) {
      const t = flameTree(s, d, d.totals.peakAllocatedAt, { fullStacks: full });
      expect(t.frame[0]).toBe(ROOT_FRAME);
      expect(t.total_bytes).toBe(r.expected.devices[0]!.trace_peak_allocated_bytes);
      expect(allocationsUnder(t, 0).length).toBe(t.count[0]);
      for (let i = 0; i < t.frame.length; i++) {
        let bytes = 0;
        for (const id of allocationsUnder(t, i)) bytes += d.allocations.size[id]!;
        expect(bytes).toBe(t.bytes[i]);
        // Children are widest first: the next sibling is never wider.
        const sibling = i + t.size[i]!;
        if (i > 0 && sibling < t.frame.length && t.depth[sibling] === t.depth[i])
          expect(t.bytes[sibling]!).toBeLessThanOrEqual(t.bytes[i]!);
      }
    }
  });

  it('the planted leak is a user-frame leaf holding one tensor per leaking step at the dump', () => {
    const t = flameTree(s, d, d.trace.length - 1);
    const leaf = [...t.frame.keys()].find((i) => {
      const f = t.frames[t.frame[i]!];
      return f?.name === 'train_step' && f.line === 218 && t.size[i] === 1;
    });
    expect(leaf).toBeDefined();
    const f = t.frames[t.frame[leaf!]!]!;
    expect(f.user).toBe(true);
    expect(f.filename).toMatch(/train\.py$/);
    const sizes = [...allocationsUnder(t, leaf!)].map((id) => d.allocations.size[id]!);
    expect(sizes.filter((b) => b === leak).length).toBe(facts.leakIterations.length);
  });

  it('full stacks keep library frames, marked as not the user code', () => {
    const t = flameTree(s, d, d.totals.peakAllocatedAt, { fullStacks: true });
    expect(t.frames.some((f) => !f.user)).toBe(true);
    expect(t.frames.some((f) => f.user)).toBe(true);
    expect([...t.frame].filter((f) => f === NO_STACK_FRAME).length).toBeLessThanOrEqual(1);
  });
});
