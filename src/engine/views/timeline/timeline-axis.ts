import { entryTimes, timeBounds } from '../../model/entry-times.js';
import { lowerBound } from '../../model/lower-bound.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';

/**
 * The timeline's x axis. On the entry axis entry i spans [i, i+1); on the time axis it spans from
 * its time_us to the next entry's, times made non-decreasing as everywhere (entry-times.ts), so
 * any x maps to entries by binary search.
 */
export type TimelineAxis = 'entry' | 'time';

export function hasTime(d: DeviceModel): boolean {
  for (let i = 0; i < d.trace.length; i++) if (!Number.isNaN(d.trace.timeUs[i]!)) return true;
  return false;
}

/** Time of every entry, made non-decreasing (computed once per device; see entry-times.ts). */
export function timePositions(d: DeviceModel): Float64Array {
  return entryTimes(d);
}

/** First entry whose position is >= x (the trace length when none is). */
export function firstAtOrAfter(d: DeviceModel, axis: TimelineAxis, x: number): number {
  const n = d.trace.length;
  if (axis === 'entry') return Math.max(0, Math.min(n, Math.ceil(x)));
  return lowerBound(timePositions(d), x);
}

/** The whole trace on the axis: [first, last) with room for the last entry's span. */
export function axisExtent(d: DeviceModel, axis: TimelineAxis): [number, number] {
  const n = d.trace.length;
  if (axis === 'entry' || n === 0) return [0, Math.max(1, n)];
  const { first, last } = timeBounds(d);
  if (!Number.isFinite(first)) return [0, 1];
  // The last entry's state holds until the dump; give it one average entry span.
  return [first, last + Math.max(1, (last - first) / n)];
}

export interface StepMarker {
  name: string;
  stage: string;
  /** Position on the axis (the first entry at or after the annotation's time_us). */
  x: number;
}

/** `external_annotations` of this device (e.g. ProfilerStep#N START/END) placed on the axis. */
export function stepMarkers(s: Snapshot, d: DeviceModel, axis: TimelineAxis): StepMarker[] {
  return s.annotations
    .filter((a) => (a.device === -1 || a.device === d.device) && Number.isFinite(a.timeUs))
    .map((a) => ({
      name: a.name,
      stage: a.stage,
      x: axis === 'time' ? a.timeUs : firstAtOrAfter(d, 'time', a.timeUs),
    }));
}

/** An `oom` entry of the trace, placed on the axis where the timeline's cursor would mark it. */
export interface OomMark {
  entry: number;
  x: number;
}

/** The device's `oom` entries: where the allocator gave up (the timeline and minimap mark them). */
export function oomMarks(s: Snapshot, d: DeviceModel, axis: TimelineAxis): OomMark[] {
  const code = s.traceColumns.actionNames.indexOf('oom');
  if (code < 0) return [];
  const out: OomMark[] = [];
  const t = d.trace;
  for (let k = 0; k < t.length; k++) {
    if (t.action[k] !== code) continue;
    out.push({ entry: k, x: axis === 'entry' ? k + 0.5 : timePositions(d)[k]! });
  }
  return out;
}

/** Time of the trace's first timed entry, which the web app counts times from (null: no time_us). */
export function traceStartUs(d: DeviceModel): number | null {
  return timeBounds(d).start;
}
