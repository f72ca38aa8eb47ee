import { SnapshotError } from '../../base/errors.js';
import { plural } from '../../base/format.js';
import { stateSegments } from '../../derived/state/state-segments.js';
import { type PyValue, StreamedList } from '../../encode/pickle-values.js';
import { deviceTrace } from '../../model/device-trace.js';
import { entryAtTime, monotoneTimes } from '../../model/entry-times.js';
import type { RowList } from '../../model/row-list.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { isDict } from '../../values/py-values.js';
import { FrameLists, keysNotCarried, plainValue, segmentDict, traceEntries } from './slice-dicts.js';
import { type SliceRequest, type SliceWindow, sliceWindows } from './slice-window.js';

export interface DeviceSlice extends SliceWindow {
  entries: number;
  segments: number;
  blocks: number;
  /** Blocks whose rounded size was estimated (freed before the dump: the file never saw it). */
  estimated_blocks: number;
  /** Live allocations at the window's end outside every reserved range (inconsistent input): dropped. */
  dropped_allocations: number;
  /** Allocations freed inside the window whose alloc is before it: orphan frees in the slice. */
  allocated_before_window: number;
}

export interface SlicePlan {
  /** The snapshot dict to pickle; trace lists are streamed while the writer pulls them. */
  value: PyValue;
  /** Pickle protocol of the input (2-5), else 4. */
  protocol: 2 | 3 | 4 | 5;
  devices: DeviceSlice[];
  notes: string[];
}

/**
 * A smaller snapshot for a window of the trace: per device the entries in [start, end) and, as
 * `segments`, the allocator state right after the window's last entry, so that viewers and
 * memlens see the same totals, peak and live set for the window as in the original. Devices not
 * in `devices` keep an empty trace list (device_traces is indexed by device ordinal).
 */
export function planSlice(s: Snapshot, devices: DeviceModel[], req: SliceRequest): SlicePlan {
  if (s.layout === 'segment-list') {
    throw new SnapshotError(
      'is a bare list of segments (torch.cuda.memory_snapshot()): it has no trace to slice',
    );
  }
  const windows = sliceWindows(devices, req);
  const frames = new FrameLists(s.stacks);
  const facts: DeviceSlice[] = [];
  const segments: PyValue[] = [];
  windows.forEach((w, i) => {
    const d = devices[i]!;
    const state = stateSegments(s, d, w.end - 1);
    for (const seg of state.segments) segments.push(segmentDict(seg, s, frames));
    facts.push({
      ...w,
      entries: w.end - w.start,
      segments: state.segments.length,
      blocks: state.segments.reduce((n, seg) => n + seg.blocks.length, 0),
      estimated_blocks: state.estimatedBlocks,
      dropped_allocations: state.outside,
      allocated_before_window: allocatedBefore(d, w),
    });
  });
  const traceCount = Math.max(s.deviceTraceLists, ...devices.map((d) => d.device + 1));
  const traces = Array.from({ length: traceCount }, (_, ordinal): PyValue => {
    const i = windows.findIndex((w) => w.device === ordinal);
    if (i < 0) return [];
    const d = devices[i]!;
    return new StreamedList(
      traceEntries(d.trace, s.traceColumns, windows[i]!.start, windows[i]!.end, frames),
    );
  });
  const value: Record<string, PyValue> = { segments, device_traces: traces };
  const notes = notesOf(facts);
  const lost = keysNotCarried(s);
  if (lost.length > 0) notes.push(`not carried (the model does not keep them): ${lost.join(', ')}`);
  const spans = windowSpans(devices, windows, req);
  for (const [k, v] of Object.entries(s.rest)) {
    if (k === 'external_annotations') value[k] = annotationsIn(v, spans, s.devices);
    else if (isTraceLists(s, v)) {
      value[k] = v.map((list) => entriesInSpan(s, s.traceRows.get(list), spans.all, frames));
      notes.push(`'${k}': entries kept within the window's time span; other keys are as at dump`);
    } else value[k] = plainValue(v, `'${k}'`, frames);
  }
  return { value, protocol: protocolOf(s), devices: facts, notes };
}

/** A list of trace-entry lists besides device_traces (host_traces, PyTorch >= 2.14). */
function isTraceLists(s: Snapshot, v: unknown): v is unknown[][] {
  return Array.isArray(v) && v.length > 0 && v.every((l) => Array.isArray(l) && s.traceRows.has(l));
}

function allocatedBefore(d: DeviceModel, w: SliceWindow): number {
  const a = d.allocations;
  let n = 0;
  for (let id = 0; id < a.count; id++) {
    const end = a.end[id]!;
    if (a.start[id]! < w.start && end >= w.start && end < w.end) n++;
  }
  return n;
}

function protocolOf(s: Snapshot): 2 | 3 | 4 | 5 {
  const p = s.protocol;
  return p === 2 || p === 3 || p === 4 || p === 5 ? p : 4;
}

function notesOf(facts: DeviceSlice[]): string[] {
  const notes: string[] = [];
  for (const f of facts) {
    const at = `device ${f.device}`;
    if (f.estimated_blocks > 0)
      notes.push(
        `${at}: ${plural(f.estimated_blocks, 'block')} were freed before the dump, so their rounded size is estimated (round to 512 B, allocator split rule); requested sizes are exact`,
      );
    if (f.allocated_before_window > 0)
      notes.push(
        `${at}: ${plural(f.allocated_before_window, 'allocation')} freed in the window were allocated before it: the slice has their frees, not their allocs`,
      );
    if (f.dropped_allocations > 0)
      notes.push(
        `${at}: ${f.dropped_allocations} live allocations lie outside every reserved range (inconsistent input) and were left out`,
      );
  }
  return notes;
}

/** Half-open time spans [lo, hi) per sliced device and over all of them. */
interface Spans {
  of: Map<number, [number, number]>;
  all: [number, number];
}

/**
 * A device's window in time: from its first entry's time to the next entry's, open at the ends of
 * the trace (what happened before the first or after the last entry belongs to the window that
 * reaches that end); with --time-range, the requested times. No time_us: everything.
 */
function windowSpans(devices: DeviceModel[], windows: SliceWindow[], req: SliceRequest): Spans {
  const of = new Map<number, [number, number]>();
  windows.forEach((w, i) => {
    const t = devices[i]!.trace.timeUs;
    const span: [number, number] =
      req.by === 'time'
        ? [req.from, req.to]
        : [w.start > 0 ? t[w.start]! : -Infinity, w.end < t.length ? t[w.end]! : Infinity];
    of.set(w.device, span.some(Number.isNaN) ? [-Infinity, Infinity] : span);
  });
  const all: [number, number] = [
    Math.min(...[...of.values()].map((x) => x[0])),
    Math.max(...[...of.values()].map((x) => x[1])),
  ];
  return { of, all };
}

const within = ([lo, hi]: [number, number], t: number): boolean => t >= lo && t < hi;

/**
 * record_function annotations in their device's window; one naming no device of the file (it runs
 * on the CPU, its `device` is whatever was current) goes by the span of all sliced devices.
 */
function annotationsIn(v: unknown, spans: Spans, fileDevices: DeviceModel[]): PyValue {
  if (!Array.isArray(v)) return plainValue(v, "'external_annotations'");
  const known = new Set(fileDevices.map((d) => d.device));
  return v
    .filter((a) => {
      if (!isDict(a) || typeof a.time_us !== 'number') return false;
      const device = typeof a.device === 'number' ? a.device : -1;
      const span = spans.of.get(device) ?? (known.has(device) ? undefined : spans.all);
      return span !== undefined && within(span, a.time_us);
    })
    .map((a) => plainValue(a, "'external_annotations'"));
}

function entriesInSpan(
  s: Snapshot,
  rows: RowList | undefined,
  span: [number, number],
  frames: FrameLists,
): PyValue {
  const t = deviceTrace(s.traceColumns, rows);
  const times = monotoneTimes(t.timeUs, t.length);
  const from = entryAtTime(times, span[0]);
  const to = span[1] === Infinity ? t.length : entryAtTime(times, span[1]);
  return new StreamedList(traceEntries(t, s.traceColumns, from, to, frames));
}
