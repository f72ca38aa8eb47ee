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

describe('the curves at many entries', () => {
  /** Every 7th entry and some twice, so walks go on from marks and from the last entry asked. */
  const asked = (n: number) =>
    [-1, ...Array.from({ length: Math.ceil(n / 7) }, (_, j) => 7 * j), n >> 1, n - 1, n, n + 3].sort(
      (x, y) => x - y,
    );
  const walked = (d: Snapshot['devices'][number], ks: number[]) =>
    KEYS.map((key) => ks.map((k) => (k >= 0 && k < d.trace.length ? d.totals[key][k]! : Number.NaN)));
  const points = (d: Snapshot['devices'][number], ks: number[]) => {
    const c = d.totals.curvesAfterEach(ks);
    return KEYS.map((key) => Array.from(c[key]));
  };

  for (const events of [4000, 30000])
    it(`${events} events: before any walk, after a partial one, and after the whole curves`, () => {
      const bytes = generateSnapshotBytes({ events, seed: 7 }).bytes;
      const fresh = loadSnapshotBytes(bytes).devices[0]!;
      const partial = loadSnapshotBytes(bytes).devices[0]!;
      const whole = loadSnapshotBytes(bytes).devices[0]!;
      const ks = asked(fresh.trace.length);
      const expected = walked(whole, ks);
      expect(points(fresh, [5, 6000, 9000])).toEqual(walked(whole, [5, 6000, 9000]));
      // Again, now that the first walk left its marks.
      expect(points(fresh, ks)).toEqual(expected);
      partial.totals.curvesBetween(0, 2500);
      expect(points(partial, ks)).toEqual(expected);
      expect(points(whole, ks)).toEqual(expected);
    });

  for (const [name, snapshot] of snapshots())
    it(`${name}: reserved at the allocated peak is the walked curve's`, () => {
      for (const d of snapshot.devices) {
        const at = d.totals.peakAllocatedAt;
        const reserved = at >= 0 ? d.totals.reserved[at]! : d.totals.start.reserved;
        expect(d.totals.reservedAtAllocatedPeak).toBe(reserved);
        if (at >= 0) expect(d.totals.allocated[at]).toBe(d.totals.peak.allocated);
      }
    });
});

describe('the curves read in parts (scanCurves)', () => {
  /** The parts' values, joined, with the entry of each value from the part's `at`. */
  const scanned = (d: Snapshot['devices'][number], from: number, to: number) => {
    const out: number[][] = [[], [], []];
    let next = from;
    d.totals.scanCurves(from, to, (part, at) => {
      expect(at).toBe(next);
      next += part.active.length;
      KEYS.forEach((key, j) => {
        out[j]!.push(...part[key]);
      });
    });
    return out;
  };
  const walked = (d: Snapshot['devices'][number], from: number, to: number) =>
    KEYS.map((key) => Array.from(d.totals[key].subarray(from, to)));

  it('before any walk, after a partial one and after the whole curves: the walked values', () => {
    // More entries than two parts of the scan's buffer (2^14 entries), so parts and marks are crossed.
    const bytes = generateSnapshotBytes({ events: 40000, seed: 7 }).bytes;
    const whole = loadSnapshotBytes(bytes).devices[0]!;
    const n = whole.trace.length;
    expect(n).toBeGreaterThan(2 << 14);
    const ranges = [
      [0, n],
      [1, 2],
      [1023, 1025],
      [5000, 40000],
      [n - 3, n + 10],
      [n, n + 1],
      [20, 10],
    ] as const;
    for (const [from, to] of ranges) {
      const fresh = loadSnapshotBytes(bytes).devices[0]!;
      expect(scanned(fresh, from, to)).toEqual(walked(whole, from, to));
      // Again, from the marks the first scan left.
      expect(scanned(fresh, from, to)).toEqual(walked(whole, from, to));
      const partial = loadSnapshotBytes(bytes).devices[0]!;
      partial.totals.curvesBetween(0, 3000);
      expect(scanned(partial, from, to)).toEqual(walked(whole, from, to));
      expect(scanned(whole, from, to)).toEqual(walked(whole, from, to));
    }
  });
});
