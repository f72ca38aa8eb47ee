import { CATEGORIES } from '../analyses/categories/categories.js';
import { categoriesOf } from '../analyses/categories/category-curves.js';
import type { Annotation, DeviceModel, Snapshot } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';

/**
 * A snapshot as a Chrome Trace Event Format document (what ui.perfetto.dev and chrome://tracing
 * open), streamed as text pieces so a 10M-entry trace never becomes one string. One process per
 * device; counter tracks for the running totals and the categories; instants for OOMs and
 * segment events; complete slices for external_annotations (ProfilerStep#N).
 * Timestamps are the trace's own time_us, the profiler's clock, so the tracks line up with a
 * Kineto trace of the same run. Each track's timestamps never decrease: an entry stamped earlier
 * than the one before it (or not stamped) is drawn at the latest time seen.
 *
 * A total's track is exact (one point per change) while it changes at most `maxCounterPoints`
 * times; past that it is downsampled to time buckets that each keep their first, lowest, highest
 * and last value, so every peak and trough stays exact and in place (a 1 GB trace's 5M changes
 * a curve are ~950 MB of JSON, more than the UI loads comfortably).
 */
export const PERFETTO_TID = { memory: 0, events: 1, annotations: 2 } as const;
export const TOTAL_COUNTERS = ['allocated', 'active', 'reserved'] as const;
export const CATEGORY_COUNTER = 'categories';
/** The points a total's track gets by default: 5,000 buckets of first, min, max and last. */
export const DEFAULT_COUNTER_POINTS = 20_000;
/** Points a downsampled bucket keeps (first, min, max, last), so buckets = max points / 4. */
export const POINTS_PER_BUCKET = 4;
/** Buckets of the category curves per device (each the category's largest bytes in the bucket). */
const CATEGORY_POINTS = 4096;
const PIECE_CHARS = 1 << 16;

const SEGMENT_ACTIONS = new Set<number>([
  Action.segment_alloc,
  Action.segment_free,
  Action.segment_map,
  Action.segment_unmap,
]);

export interface PerfettoOptions {
  /** The most points a total's track gets before it is downsampled; Infinity keeps every change. */
  maxCounterPoints: number;
}

/** What the trace holds of each device's totals, returned when the generator ends. */
export interface PerfettoCounters {
  device: number;
  name: (typeof TOTAL_COUNTERS)[number];
  /** Times the running total changes (the points of the exact track). */
  changes: number;
  /** Points written: `changes`, or fewer where the track was downsampled. */
  points: number;
  /** Time buckets of the downsampled track; 0 where it is exact. */
  buckets: number;
}

export function* perfettoTrace(
  s: Snapshot,
  name: string,
  opts: PerfettoOptions = { maxCounterPoints: Number.POSITIVE_INFINITY },
): Generator<string, PerfettoCounters[]> {
  const out = new Pieces();
  out.push(`{"displayTimeUnit":"ms","otherData":${JSON.stringify({ source: name, exporter: 'memlens' })},`);
  out.push('"traceEvents":[\n');
  let first = true;
  const text = (json: string) => {
    out.push(first ? json : `,\n${json}`);
    first = false;
  };
  const event = (e: object) => text(JSON.stringify(e));
  const counters: PerfettoCounters[] = [];
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
    for (const counter of TOTAL_COUNTERS) {
      const curve = d.totals[counter];
      const track = counterEntries(curve, ts, opts.maxCounterPoints);
      counters.push({
        device: pid,
        name: counter,
        changes: track.changes,
        points: track.entries.length,
        buckets: track.buckets,
      });
      // Written as text, not through JSON.stringify: a full-resolution track has millions of points.
      // Counters are per process in the format, so they carry no tid.
      const head = `{"ph":"C","name":"${counter}","pid":${pid},"ts":`;
      for (const i of track.entries) {
        text(`${head}${jsonNumber(ts[i]!)},"args":{"bytes":${jsonNumber(curve[i]!)}}}`);
        if (out.full) yield* out.drain();
      }
    }
    for (const e of categoryCounters(s, d, ts)) event(e);
    for (const e of instants(s, d, ts)) event(e);
    for (const e of annotationSlices(annotationsOf(s, d), pid)) event(e);
    yield* out.drain();
  }
  out.push('\n]}\n');
  yield* out.drain();
  return counters;
}

/** A number as JSON writes it (null where JSON has no number for it). */
function jsonNumber(v: number): string {
  return Number.isFinite(v) ? String(v) : 'null';
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

/**
 * The entries a total's track draws: each one where the total changes while there are at most
 * `maxPoints` of them; else the track's time span cut into maxPoints / 4 equal buckets, each
 * keeping the entries of its first, lowest, highest and last value (in entry order; within a
 * bucket, a value equal to the one drawn before it is left out). Every bucket with entries then
 * draws its highest and lowest value exactly where they happened (the global peak among them),
 * and the value carried into the next bucket is exact.
 */
export function counterEntries(
  curve: Float64Array,
  ts: Float64Array,
  maxPoints: number,
): { entries: Int32Array; changes: number; buckets: number } {
  const n = curve.length;
  let changes = 0;
  for (let i = 0; i < n; i++) if (i === 0 || curve[i] !== curve[i - 1]) changes++;
  if (changes <= maxPoints) {
    const entries = new Int32Array(changes);
    let k = 0;
    for (let i = 0; i < n; i++) if (i === 0 || curve[i] !== curve[i - 1]) entries[k++] = i;
    return { entries, changes, buckets: 0 };
  }
  const buckets = Math.max(1, Math.floor(maxPoints / POINTS_PER_BUCKET));
  const picked: number[] = [];
  let bucketStart = 0;
  const keep = (i: number) => {
    if (picked.length === bucketStart || curve[i] !== curve[picked.at(-1)!]) picked.push(i);
  };
  const t0 = ts[0]!;
  const span = ts[n - 1]! - t0;
  let bucket = -1;
  let firstI = 0;
  let minI = 0;
  let maxI = 0;
  let lastI = 0;
  const flush = () => {
    if (bucket < 0) return;
    bucketStart = picked.length;
    // firstI <= minI, maxI <= lastI: the two middle ones go in entry order.
    keep(firstI);
    keep(Math.min(minI, maxI));
    keep(Math.max(minI, maxI));
    keep(lastI);
  };
  for (let i = 0; i < n; i++) {
    const b = bucketOf(ts[i]!, t0, span, buckets);
    if (b !== bucket) {
      flush();
      bucket = b;
      firstI = minI = maxI = lastI = i;
      continue;
    }
    const v = curve[i]!;
    if (v < curve[minI]!) minI = i;
    if (v > curve[maxI]!) maxI = i;
    lastI = i;
  }
  flush();
  return { entries: Int32Array.from(picked), changes, buckets };
}

/** The time bucket (of `buckets` equal ones over [t0, t0 + span]) a timestamp falls in. */
export function bucketOf(t: number, t0: number, span: number, buckets: number): number {
  return span > 0 ? Math.min(buckets - 1, Math.floor(((t - t0) / span) * buckets)) : 0;
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
