import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { pickleDumps } from '../../../src/engine/encode/pickle-writer.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import type { Snapshot } from '../../../src/engine/model/snapshot.js';
import { impossibleCases } from '../../helpers/impossible.js';

/**
 * The per-entry curves are walked forward from the start, as far as asked (curvesBetween): they
 * must end at the dump's figures (raised by the lift where the trace undoes below zero), and a
 * walk in steps must give what one walk gives.
 */
const KEYS = ['allocated', 'active', 'reserved'] as const;

function snapshots(): [string, Snapshot][] {
  const generated: [string, Snapshot][] = [3, 11].map((seed) => [
    `generated seed ${seed}`,
    loadSnapshotBytes(generateSnapshotBytes({ events: 4000, seed }).bytes),
  ]);
  const impossible = impossibleCases()
    .filter((c) => !c.refused)
    .map((c): [string, Snapshot] => [c.name, loadSnapshotBytes(pickleDumps(c.value))]);
  return [...generated, ...impossible];
}

describe('running totals curves', () => {
  for (const [name, snapshot] of snapshots()) {
    it(`${name}: the last entry's figures are the dump's (lifted), none below zero`, () => {
      for (const d of snapshot.devices) {
        const n = d.trace.length;
        if (n === 0) continue;
        for (const k of KEYS) {
          expect(d.totals[k][n - 1]).toBe(d.totals.end[k] + d.totals.lift[k]);
          expect(Math.min(d.totals.start[k], ...d.totals[k])).toBeGreaterThanOrEqual(0);
        }
      }
    });
  }

  it('a walk in steps gives what one walk gives', () => {
    const bytes = generateSnapshotBytes({ events: 5000, seed: 5 }).bytes;
    const whole = loadSnapshotBytes(bytes).devices[0]!.totals;
    const stepped = loadSnapshotBytes(bytes).devices[0]!.totals;
    const n = whole.allocated.length;
    expect(n).toBeGreaterThan(1000);
    for (const [from, to] of [
      [0, 700],
      [700, 701],
      [701, n + 50],
      [10, 20],
    ] as const) {
      const part = stepped.curvesBetween(from, to);
      for (const k of KEYS) expect(Array.from(part[k])).toEqual(Array.from(whole[k].subarray(from, to)));
    }
    for (const k of KEYS) expect(Array.from(stepped[k])).toEqual(Array.from(whole[k]));
  });
});

describe('allocated bytes at a few entries', () => {
  for (const [name, snapshot] of snapshots())
    it(`${name}: one pass gives the walked curve's values (NaN outside the trace)`, () => {
      for (const d of snapshot.devices) {
        const n = d.trace.length;
        const ks = [-1, 0, 1, n >> 2, n >> 1, n >> 1, n - 1, n].filter(
          (k, i, all) => i === 0 || k >= all[i - 1]!,
        );
        const before = Array.from(d.totals.allocatedAfterEach(ks));
        const curve = d.totals.allocated;
        expect(before).toEqual(ks.map((k) => (k >= 0 && k < n ? curve[k]! : Number.NaN)));
        expect(Array.from(d.totals.allocatedAfterEach(ks))).toEqual(before);
      }
    });
});
