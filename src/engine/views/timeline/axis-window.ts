import { lowerBound } from '../../model/lower-bound.js';
import type { DeviceModel } from '../../model/snapshot.js';
import { axisExtent, type TimelineAxis, timePositions } from './timeline-axis.js';

/**
 * The same stretch of the trace on the other x axis, so switching between event index and wall
 * time keeps what is in view. Entry i spans [i, i+1) on the entry axis and [t(i), t(i+1)) on the
 * time axis (t non-decreasing, timeline-axis.ts); a point inside an entry keeps its fraction of it.
 */
export function convertWindow(
  d: DeviceModel,
  [x0, x1]: [number, number],
  from: TimelineAxis,
  to: TimelineAxis,
): [number, number] {
  if (from === to || d.trace.length === 0) return [x0, x1];
  const convert = to === 'time' ? entryToTime(d) : timeToEntry(d);
  return [convert(x0), convert(x1)];
}

/** Start of entry k on the time axis (the axis's end for k = n). */
function startTime(d: DeviceModel, pos: Float64Array): (k: number) => number {
  const end = axisExtent(d, 'time')[1];
  return (k) => (k >= pos.length ? end : pos[Math.max(0, k)]!);
}

function entryToTime(d: DeviceModel): (x: number) => number {
  const at = startTime(d, timePositions(d));
  const n = d.trace.length;
  return (x) => {
    const k = Math.max(0, Math.min(n, Math.floor(x)));
    const f = Math.max(0, Math.min(1, x - k));
    return at(k) + f * (at(k + 1) - at(k));
  };
}

function timeToEntry(d: DeviceModel): (t: number) => number {
  const pos = timePositions(d);
  const at = startTime(d, pos);
  return (t) => {
    const first = lowerBound(pos, t);
    if (first < pos.length && pos[first] === t) return first;
    if (first === 0) return 0;
    // t falls inside the entry before: keep its fraction of that entry's span.
    const k = first - 1;
    const span = at(k + 1) - at(k);
    return k + (span > 0 ? Math.min(1, (t - at(k)) / span) : 0);
  };
}
