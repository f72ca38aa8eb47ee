import type { DeviceTrace } from './device-trace.js';
import { lowerBound } from './lower-bound.js';
import type { DeviceModel } from './snapshot.js';

/**
 * One rule for "which entry is at time t", used by every command and view that takes times:
 * entry times made non-decreasing. Entries on different streams can be recorded slightly out of
 * order, and an entry without time_us keeps the previous time, so any time maps to entries by
 * binary search, and a window in time is always a contiguous range of entries.
 */
export function monotoneTimes(timeUs: ArrayLike<number>, n: number): Float64Array {
  const out = new Float64Array(n);
  let last = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const t = timeUs[i]!;
    if (!Number.isNaN(t) && t > last) last = t;
    out[i] = last;
  }
  return out;
}

const cache = new WeakMap<DeviceModel | DeviceTrace, Float64Array>();

/** monotoneTimes of a device's trace, computed once. */
export function entryTimes(d: DeviceModel | DeviceTrace): Float64Array {
  const trace = 'trace' in d ? d.trace : d;
  let times = cache.get(d);
  if (times === undefined) {
    times = monotoneTimes(trace.timeUs, trace.length);
    cache.set(d, times);
  }
  return times;
}

/** What the made-monotone times say of the whole trace, without the times themselves. */
export interface TimeBounds {
  /** The first entry's time (-Infinity when it has none). */
  first: number;
  /** The first finite time, null when none is. */
  start: number | null;
  /** The last entry's time: the largest of all. */
  last: number;
}

const boundsCache = new WeakMap<DeviceModel, TimeBounds>();

/**
 * `entryTimes(d)`'s first, first finite and last values: read from the times when they are
 * computed, else from one pass that stores nothing. Opening a file asks for them (the web app's
 * axes), and the whole array (8 bytes an entry, 40 ms on 7.5M entries) is wanted only later, by
 * the timeline on the time axis.
 */
export function timeBounds(d: DeviceModel): TimeBounds {
  let bounds = boundsCache.get(d);
  if (bounds === undefined) {
    bounds = boundsOf(cache.get(d) ?? d.trace.timeUs, d.trace.length);
    boundsCache.set(d, bounds);
  }
  return bounds;
}

/** The bounds by monotoneTimes' rule (on made-monotone times, the same values again). */
function boundsOf(timeUs: ArrayLike<number>, n: number): TimeBounds {
  // A NaN time compares false: it keeps the time before, as in monotoneTimes.
  let last = Number.NEGATIVE_INFINITY;
  let first = last;
  let start: number | null = null;
  let i = 0;
  for (; i < n && start === null; i++) {
    if (timeUs[i]! > last) last = timeUs[i]!;
    if (i === 0) first = last;
    if (Number.isFinite(last)) start = last;
  }
  // The rest only raises the last time: the loop the pass costs.
  for (; i < n; i++) if (timeUs[i]! > last) last = timeUs[i]!;
  return { first, start, last };
}

/** The first entry at time t or later (`after`: strictly later); the trace length if none. */
export function entryAtTime(times: Float64Array, t: number, after = false): number {
  return lowerBound(times, t, after);
}

/**
 * `entryAtTime` of each of the times `ts` (in any order; `after[q]` for each, or one for all): by
 * binary search when the device's times are computed, else in one pass over the trace that
 * stores nothing, so finding a few thousand iteration bounds never pays for the whole array
 * (8 bytes an entry).
 */
export function entriesAtTimes(
  d: DeviceModel,
  ts: ArrayLike<number>,
  after: boolean | ArrayLike<boolean> = false,
): Int32Array {
  const strictly = typeof after === 'boolean' ? () => after : (q: number) => after[q]!;
  const known = cache.get(d);
  if (known !== undefined) return Int32Array.from(ts, (t, q) => entryAtTime(known, t, strictly(q)));
  const n = d.trace.length;
  const timeUs = d.trace.timeUs;
  // A NaN time compares false, so the search ends at entry 0. The others go in the order they
  // are reached: by time, and at one time `>=` before `>`.
  const out = new Int32Array(ts.length);
  const order = Array.from({ length: ts.length }, (_, q) => q)
    .filter((q) => !Number.isNaN(ts[q]!))
    .sort((x, y) => ts[x]! - ts[y]! || Number(strictly(x)) - Number(strictly(y)));
  const m = order.length;
  const reached = (last: number, q: number) =>
    strictly(order[q]!) ? last > ts[order[q]!]! : last >= ts[order[q]!]!;
  let q = 0;
  let next = m > 0 ? ts[order[0]!]! : Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY; // as monotoneTimes (a NaN time is never above it)
  for (let i = 0; i < n && q < m; i++) {
    const t = timeUs[i]!;
    if (t > last) last = t;
    if (last < next) continue;
    while (q < m && reached(last, q)) out[order[q++]!] = i;
    if (q < m) next = ts[order[q]!]!;
  }
  for (; q < m; q++) out[order[q]!] = n;
  return out;
}
