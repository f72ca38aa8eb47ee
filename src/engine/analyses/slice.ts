import { isDict } from '../decode/py-values.js';
import type { RowList } from '../decode/row-list.js';
import { type PyValue, StreamedList } from '../encode/pickle-values.js';
import { SnapshotError } from '../errors.js';
import { deviceTrace } from '../model/device-trace.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { FrameLists, plainValue, segmentDict, traceEntries } from './slice-dicts.js';
import { firstAtOrAfter, type SliceRequest, type SliceWindow, sliceWindows } from './slice-window.js';
import { stateSegments } from './state-segments.js';

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
  const traceCount = Math.max(0, ...devices.map((d) => d.device + 1));
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
  const span = timeSpan(devices, windows);
  for (const [k, v] of Object.entries(s.rest)) {
    if (k === 'external_annotations') value[k] = annotationsIn(v, devices, windows);
    else if (isTraceLists(s, v)) {
      value[k] = v.map((list) => entriesInSpan(s, s.traceRows.get(list), span, frames));
      notes.push(`'${k}': entries kept within the window's time span; other keys are as at dump`);
    } else value[k] = plainValue(v, `'${k}'`, frames);
  }
  return { value, protocol: protocolOf(s), devices: facts, notes };
}

/** A list of trace-entry lists besides device_traces (host_traces, PyTorch >= 2.14). */
function isTraceLists(s: Snapshot, v: unknown): v is unknown[][] {
  return Array.isArray(v) && v.length > 0 && v.every((l) => Array.isArray(l) && s.traceRows.has(l));
}

/** The time span the device windows cover; everything when the trace has no time_us. */
function timeSpan(devices: DeviceModel[], windows: SliceWindow[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  windows.forEach((w, i) => {
    const t = devices[i]!.trace.timeUs;
    if (w.end > w.start) {
      lo = Math.min(lo, t[w.start]!);
      hi = Math.max(hi, t[w.end - 1]!);
    }
  });
  return Number.isNaN(lo) || Number.isNaN(hi) ? [-Infinity, Infinity] : [lo, hi];
}

function entriesInSpan(
  s: Snapshot,
  rows: RowList | undefined,
  [lo, hi]: [number, number],
  frames: FrameLists,
): PyValue {
  const t = deviceTrace(s.traceColumns, rows);
  const from = firstAtOrAfter(t.timeUs, lo);
  const to = hi === Infinity ? t.length : firstAtOrAfter(t.timeUs, hi + 1);
  return new StreamedList(traceEntries(t, s.traceColumns, from, to, frames));
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

/** record_function annotations of each sliced device within its window's time span. */
function annotationsIn(v: unknown, devices: DeviceModel[], windows: SliceWindow[]): PyValue {
  if (!Array.isArray(v)) return plainValue(v, "'external_annotations'");
  const spans = new Map<number, [number, number]>();
  windows.forEach((w, i) => {
    const t = devices[i]!.trace.timeUs;
    if (w.end > w.start) spans.set(w.device, [t[w.start]!, t[w.end - 1]!]);
  });
  return v
    .filter((a) => {
      if (!isDict(a) || typeof a.time_us !== 'number') return false;
      const span = spans.get(typeof a.device === 'number' ? a.device : -1);
      return span !== undefined && a.time_us >= span[0] && a.time_us <= span[1];
    })
    .map((a) => plainValue(a, "'external_annotations'"));
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
        `${at}: ${f.estimated_blocks} blocks were freed before the dump, so their rounded size is estimated (round to 512 B, allocator split rule); requested sizes are exact`,
      );
    if (f.allocated_before_window > 0)
      notes.push(
        `${at}: ${f.allocated_before_window} allocations freed in the window were allocated before it: the slice has their frees, not their allocs`,
      );
    if (f.dropped_allocations > 0)
      notes.push(
        `${at}: ${f.dropped_allocations} live allocations lie outside every reserved range (inconsistent input) and were left out`,
      );
  }
  return notes;
}
