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

/** The first entry at time t or later (`after`: strictly later); the trace length if none. */
export function entryAtTime(times: Float64Array, t: number, after = false): number {
  return lowerBound(times, t, after);
}
