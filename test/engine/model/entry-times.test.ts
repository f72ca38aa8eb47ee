/**
 * One rule maps a time to an entry everywhere (model/entry-times.ts): times made non-decreasing,
 * an entry without time_us keeping the previous one. Slice, unreleased-in-range, iterations and
 * the timeline used three different rules before, which disagreed on out-of-order times.
 */
import { describe, expect, it } from 'vitest';
import { windowEntries } from '../../../src/engine/analyses/leaks/unreleased.js';
import { sliceWindows } from '../../../src/engine/analyses/slice/slice-window.js';
import {
  entriesAtTimes,
  entryAtTime,
  entryTimes,
  monotoneTimes,
  timeBounds,
} from '../../../src/engine/model/entry-times.js';
import { firstAtOrAfter } from '../../../src/engine/views/timeline/timeline-axis.js';
import { snapshotOf } from '../../helpers/snapshot-of.js';

// Out of order (11 after 12), a missing time, repeated times.
const TIMES = [10, 12, 11, Number.NaN, 15, 15, 20];

/** A device whose trace holds one alloc at each of `times` (a NaN: an entry without time_us). */
function deviceOfTimes(times: number[] = TIMES) {
  const trace = times.map((t, i) => ({
    action: 'alloc',
    addr: 4096 * (i + 1),
    size: 512,
    stream: 0,
    ...(Number.isNaN(t) ? {} : { time_us: t }),
    frames: [],
  }));
  return snapshotOf({ segments: [], device_traces: [trace] }).devices[0]!;
}

describe('the time → entry rule', () => {
  it('makes times non-decreasing and carries the last time over a missing one', () => {
    expect(Array.from(monotoneTimes(TIMES, TIMES.length))).toEqual([10, 12, 12, 12, 15, 15, 20]);
    expect(Array.from(monotoneTimes([Number.NaN, 5], 2))).toEqual([Number.NEGATIVE_INFINITY, 5]);
  });

  it('finds the first entry at or after a time, or strictly after it', () => {
    const times = monotoneTimes(TIMES, TIMES.length);
    expect([9, 10, 11, 12, 13, 15, 20, 21].map((t) => entryAtTime(times, t))).toEqual([
      0, 0, 1, 1, 4, 4, 6, 7,
    ]);
    expect([9, 10, 12, 15, 20].map((t) => entryAtTime(times, t, true))).toEqual([0, 1, 4, 6, 7]);
  });

  it('slice, unreleased-in-range and the timeline cut an out-of-order trace at the same entries', () => {
    const d = deviceOfTimes();
    for (const [lo, hi] of [
      [11, 15],
      [12, 14],
      [10, 20],
    ] as const) {
      const [first, last] = windowEntries(d, { timeUs: [lo, hi] });
      expect(first).toBe(firstAtOrAfter(d, 'time', lo));
      const [w] = sliceWindows([d], { by: 'time', from: lo, to: hi + 1 });
      // slice's window is half-open [from, to); unreleased's is inclusive of hi.
      expect([w!.start, w!.end - 1]).toEqual([first, last]);
    }
  });
});

describe('many times at once', () => {
  // Unordered, repeated, between and beyond the entries' times, NaN and infinite.
  const QUERIES = [15, 9, 12, 12, 21, Number.NaN, 10, 11, 20, Infinity, -Infinity, 13, 15, 10];

  it('one pass gives the binary search on the made-monotone times, at or strictly after', () => {
    const times = monotoneTimes(TIMES, TIMES.length);
    const mixed = QUERIES.map((_, q) => q % 3 === 1);
    for (const after of [false, true, mixed]) {
      const expected = QUERIES.map((t, q) =>
        entryAtTime(times, t, typeof after === 'boolean' ? after : after[q]!),
      );
      expect(Array.from(entriesAtTimes(deviceOfTimes(), QUERIES, after))).toEqual(expected);
      // With the device's times computed, they are searched instead.
      const d = deviceOfTimes();
      entryTimes(d);
      expect(Array.from(entriesAtTimes(d, QUERIES, after))).toEqual(expected);
    }
  });
});

describe('the bounds of the times', () => {
  // Missing first times, out of order, none at all (time_us is an int: never infinite).
  const CASES = [
    TIMES,
    [Number.NaN, Number.NaN, 5, 3, Number.NaN, 9],
    [Number.NaN, Number.NaN],
    [4, 2, Number.NaN],
    [7],
  ];

  it('are the made-monotone times’ first, first finite and last, computed or not', () => {
    for (const times of CASES) {
      const pos = monotoneTimes(times, times.length);
      const expected = {
        first: pos[0],
        start: Array.from(pos).find((t) => Number.isFinite(t)) ?? null,
        last: pos[pos.length - 1],
      };
      expect(timeBounds(deviceOfTimes(times))).toEqual(expected);
      const computed = deviceOfTimes(times);
      entryTimes(computed);
      expect(timeBounds(computed)).toEqual(expected);
    }
  });
});
