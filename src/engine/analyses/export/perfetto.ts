import type { Annotation, DeviceModel, Snapshot } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';
import { CATEGORIES } from '../categories/categories.js';
import { categoriesOf } from '../categories/category-curves.js';

/**
 * A snapshot as a Chrome Trace Event Format document (what ui.perfetto.dev and chrome://tracing
 * open), streamed as text pieces so a 10M-entry trace never becomes one string. One process per
 * device; counter tracks for the running totals (exact: one point per change) and the categories;
 * instants for OOMs and segment events; complete slices for external_annotations (ProfilerStep#N).
 * Timestamps are the trace's own time_us, the profiler's clock, so the tracks line up with a
 * Kineto trace of the same run. Each track's timestamps never decrease: an entry stamped earlier
 * than the one before it (or not stamped) is drawn at the latest time seen.
 */
export const PERFETTO_TID = { memory: 0, events: 1, annotations: 2 } as const;
export const TOTAL_COUNTERS = ['allocated', 'active', 'reserved'] as const;
export const CATEGORY_COUNTER = 'categories';
/** Buckets of the category curves per device (each the category's largest bytes in the bucket). */
const CATEGORY_POINTS = 4096;
const PIECE_CHARS = 1 << 16;

const SEGMENT_ACTIONS = new Set<number>([
  Action.segment_alloc,
  Action.segment_free,
  Action.segment_map,
  Action.segment_unmap,
]);

export function* perfettoTrace(s: Snapshot, name: string): Generator<string> {
  const out = new Pieces();
  out.push(`{"displayTimeUnit":"ms","otherData":${JSON.stringify({ source: name, exporter: 'memlens' })},`);
  out.push('"traceEvents":[\n');
  let first = true;
  const event = (e: object) => {
    out.push(`${first ? '' : ',\n'}${JSON.stringify(e)}`);
    first = false;
  };
  for (const d of s.devices) {
    const pid = d.device;
    event({ ph: 'M', name: 'process_name', pid, args: { name: `GPU ${d.device} memory` } });
    event({
      ph: 'M',
      name: 'thread_name',
      pid,
      tid: PERFETTO_TID.events,
      args: { name: 'OOMs and segments' },
    });
    event({
      ph: 'M',
      name: 'thread_name',
      pid,
      tid: PERFETTO_TID.annotations,
      args: { name: 'annotations' },
    });
    const ts = monotonicTimes(d);
    yield* out.drain();
    for (const piece of totalCounters(d, ts)) {
      event(piece);
      if (out.full) yield* out.drain();
    }
    for (const e of categoryCounters(s, d, ts)) event(e);
    for (const e of instants(s, d, ts)) event(e);
    for (const e of annotationSlices(annotationsOf(s, d), pid)) event(e);
    yield* out.drain();
  }
  out.push('\n]}\n');
  yield* out.drain();
}

class Pieces {
  private parts: string[] = [];
  private chars = 0;
  get full(): boolean {
    return this.chars >= PIECE_CHARS;
  }
  push(text: string): void {
    this.parts.push(text);
    this.chars += text.length;
  }
  *drain(): Generator<string> {
    if (this.parts.length === 0) return;
    yield this.parts.join('');
    this.parts = [];
    this.chars = 0;
  }
}

/** Each entry's time on the device's track: its time_us, never before an earlier entry's (µs). */
export function monotonicTimes(d: DeviceModel): Float64Array {
  const t = d.trace.timeUs;
  const out = new Float64Array(t.length);
  const stamped = t.some((v) => !Number.isNaN(v));
  let last = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < t.length; i++) {
    // A trace with no time_us at all (PyTorch < 2.2) is laid out one entry per µs.
    const v = stamped ? t[i]! : i;
    if (!Number.isNaN(v) && v > last) last = v;
    out[i] = Number.isFinite(last) ? last : 0;
  }
  return out;
}

function* totalCounters(d: DeviceModel, ts: Float64Array): Generator<object> {
  const curves = TOTAL_COUNTERS.map((k) => d.totals[k]);
  const previous = TOTAL_COUNTERS.map(() => Number.NaN);
  for (let i = 0; i < ts.length; i++) {
    for (let k = 0; k < curves.length; k++) {
      const v = curves[k]![i]!;
      if (v === previous[k]) continue;
      previous[k] = v;
      yield {
        ph: 'C',
        name: TOTAL_COUNTERS[k],
        pid: d.device,
        tid: PERFETTO_TID.memory,
        ts: ts[i],
        args: { bytes: v },
      };
    }
  }
}

function* categoryCounters(s: Snapshot, d: DeviceModel, ts: Float64Array): Generator<object> {
  if (ts.length === 0) return;
  const curve = categoriesOf(s, d, CATEGORY_POINTS).curve;
  for (let b = 0; b < curve.points; b++) {
    const entry = Math.max(0, curve.first_entry[b]!);
    const args: Record<string, number> = {};
    CATEGORIES.forEach((c) => {
      args[c] = curve.bytes[c][b]!;
    });
    yield { ph: 'C', name: CATEGORY_COUNTER, pid: d.device, tid: PERFETTO_TID.memory, ts: ts[entry], args };
  }
}

function* instants(s: Snapshot, d: DeviceModel, ts: Float64Array): Generator<object> {
  const t = d.trace;
  const names = s.traceColumns.actionNames;
  for (let i = 0; i < t.length; i++) {
    const a = t.action[i]!;
    if (a !== Action.oom && !SEGMENT_ACTIONS.has(a)) continue;
    const args: Record<string, number | string> = { entry: i, size: t.size[i]! };
    if (a === Action.oom) args.device_free = t.deviceFree?.[i] ?? Number.NaN;
    else args.address = `0x${t.addr[i]!.toString(16)}`;
    yield {
      ph: 'i',
      s: 't',
      name: a === Action.oom ? 'OOM' : names[a],
      pid: d.device,
      tid: PERFETTO_TID.events,
      ts: ts[i],
      args: jsonSafe(args),
    };
  }
}

function jsonSafe(args: Record<string, number | string>): Record<string, number | string | null> {
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, Number.isNaN(v) ? null : v]));
}

/** Annotations of this device; those without a device go to the first device's track. */
function annotationsOf(s: Snapshot, d: DeviceModel): Annotation[] {
  const first = s.devices[0]?.device;
  const known = new Set(s.devices.map((x) => x.device));
  return s.annotations.filter(
    (a) => !Number.isNaN(a.timeUs) && (a.device === d.device || (!known.has(a.device) && d.device === first)),
  );
}

/**
 * START/END pairs of one name as complete slices ("X"), nested by time; an END without its START
 * (recording began inside the scope) or a START never ended is left out rather than guessed.
 */
export function* annotationSlices(list: Annotation[], pid: number): Generator<object> {
  const open = new Map<string, number[]>();
  const slices: { name: string; ts: number; dur: number }[] = [];
  const sorted = [...list].sort((a, b) => a.timeUs - b.timeUs);
  for (const a of sorted) {
    if (a.stage === 'START') {
      const stack = open.get(a.name) ?? [];
      stack.push(a.timeUs);
      open.set(a.name, stack);
    } else if (a.stage === 'END') {
      const start = open.get(a.name)?.pop();
      if (start !== undefined) slices.push({ name: a.name, ts: start, dur: a.timeUs - start });
    }
  }
  slices.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  for (const x of slices) {
    yield { ph: 'X', name: x.name, pid, tid: PERFETTO_TID.annotations, ts: x.ts, dur: x.dur };
  }
}
