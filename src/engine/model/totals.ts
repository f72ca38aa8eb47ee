import type { DeviceTrace } from './device-trace.js';
import type { SegmentTables } from './segments.js';
import { BlockState } from './segments.js';
import { Action } from './trace-columns.js';

/**
 * Running totals after every trace entry, rebuilt backwards from the dump-time state (the only
 * complete state: the ring buffer may have dropped the beginning). Byte figures use the sizes the
 * trace records: requested bytes for alloc/free, real bytes for segment events.
 */
export interface RunningTotals {
  /** Requested bytes of active_allocated blocks (drops at free_requested). */
  allocated: Float64Array;
  /** Requested bytes of active blocks, i.e. allocated + pending free (drops at free_completed). */
  active: Float64Array;
  /** Reserved bytes: segment_alloc/segment_map add, segment_free/segment_unmap remove. */
  reserved: Float64Array;
  start: Figures;
  end: Figures;
  peak: Figures;
  /** Event index at which allocated / reserved first reach their peak (-1: before the first event). */
  peakAllocatedAt: number;
  peakReservedAt: number;
}

export interface Figures {
  allocated: number;
  active: number;
  reserved: number;
  allocations: number;
  activeAllocations: number;
  segments: number;
}

/** Dump-time figures of one device, in the trace's units (requested bytes, block counts). */
export function endFigures(t: SegmentTables, device: number): Figures {
  const f: Figures = {
    allocated: 0,
    active: 0,
    reserved: 0,
    allocations: 0,
    activeAllocations: 0,
    segments: 0,
  };
  const { blocks } = t;
  for (const s of t.segments) {
    if (s.device !== device) continue;
    f.reserved += s.totalSize;
    f.segments++;
    for (let b = s.firstBlock; b < s.firstBlock + s.blockCount; b++) {
      const st = blocks.state[b];
      if (st !== BlockState.allocated && st !== BlockState.pendingFree) continue;
      f.active += blocks.requestedSize[b]!;
      f.activeAllocations++;
      if (st === BlockState.allocated) {
        f.allocated += blocks.requestedSize[b]!;
        f.allocations++;
      }
    }
  }
  return f;
}

export function runningTotals(trace: DeviceTrace, end: Figures): RunningTotals {
  const n = trace.length;
  const allocated = new Float64Array(n);
  const active = new Float64Array(n);
  const reserved = new Float64Array(n);
  const cur = { ...end };
  const peak = { ...end };
  let peakAllocatedAt = n - 1;
  let peakReservedAt = n - 1;
  const { action, size } = trace;
  for (let i = n - 1; i >= 0; i--) {
    allocated[i] = cur.allocated;
    active[i] = cur.active;
    reserved[i] = cur.reserved;
    const a = action[i]!;
    // Entries that change no total (snapshot, oom, annotations) leave `peak` as it is.
    const changes = a <= Action.segment_unmap || a === Action.free;
    if (changes) undo(a, size[i]!, cur);
    // Ties go to the earliest moment the peak was reached.
    if (cur.allocated >= peak.allocated) peakAllocatedAt = i - 1;
    if (cur.reserved >= peak.reserved) peakReservedAt = i - 1;
    if (changes) raise(peak, cur);
  }
  if (n === 0) peakAllocatedAt = peakReservedAt = -1;
  return { allocated, active, reserved, start: cur, end, peak, peakAllocatedAt, peakReservedAt };
}

/** Steps `cur` from "after entry" to "before entry". */
function undo(action: number, size: number, cur: Figures): void {
  const bytes = Number.isNaN(size) ? 0 : size;
  switch (action) {
    case Action.alloc:
      cur.allocated -= bytes;
      cur.active -= bytes;
      cur.allocations--;
      cur.activeAllocations--;
      break;
    case Action.free_requested:
      cur.allocated += bytes;
      cur.allocations++;
      break;
    case Action.free_completed:
      cur.active += bytes;
      cur.activeAllocations++;
      break;
    case Action.free: // the viewer's fold of free_requested + free_completed
      cur.allocated += bytes;
      cur.allocations++;
      cur.active += bytes;
      cur.activeAllocations++;
      break;
    case Action.segment_alloc:
      cur.reserved -= bytes;
      cur.segments--;
      break;
    case Action.segment_map:
      cur.reserved -= bytes;
      break;
    case Action.segment_free:
      cur.reserved += bytes;
      cur.segments++;
      break;
    case Action.segment_unmap:
      cur.reserved += bytes;
      break;
  }
}

function raise(peak: Figures, cur: Figures): void {
  peak.allocated = Math.max(peak.allocated, cur.allocated);
  peak.active = Math.max(peak.active, cur.active);
  peak.reserved = Math.max(peak.reserved, cur.reserved);
  peak.allocations = Math.max(peak.allocations, cur.allocations);
  peak.activeAllocations = Math.max(peak.activeAllocations, cur.activeAllocations);
  peak.segments = Math.max(peak.segments, cur.segments);
}
