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
  readonly allocated: Float64Array;
  /** Requested bytes of active blocks, i.e. allocated + pending free (drops at free_completed). */
  readonly active: Float64Array;
  /** Reserved bytes: segment_alloc/segment_map add, segment_free/segment_unmap remove. */
  readonly reserved: Float64Array;
  start: Figures;
  end: Figures;
  peak: Figures;
  /** Event index at which allocated / reserved first reach their peak (-1: before the first event). */
  peakAllocatedAt: number;
  peakReservedAt: number;
  /**
   * Bytes added to every point of a curve that undoing the trace from the dump took below zero
   * (a trace that allocates more than the dump holds: an impossible file). 0 for a possible one.
   */
  lift: { allocated: number; active: number; reserved: number };
  /**
   * The curves after entries `from` .. `to` - 1, as views. Only the entries up to `to` are walked
   * (forward from the start), so an export writes its first rows before the whole trace is walked.
   */
  curvesBetween(from: number, to: number): Curves;
  /**
   * Allocated bytes after each of the entries `ks` (ascending): the curve's values there (NaN
   * outside the trace), from one pass that stores only them when the curves are not walked yet.
   */
  allocatedAfterEach(ks: ArrayLike<number>): Float64Array;
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
  return new LazyTotals(trace, end);
}

/** The three per-entry curves. */
export interface Curves {
  allocated: Float64Array;
  active: Float64Array;
  reserved: Float64Array;
}

/**
 * Start, peaks and their moments come from one walk that stores nothing; the per-entry curves
 * (24 bytes an entry: 180 MB for a 7.5M-entry trace) are walked on first use, so a summary,
 * which reads only the peaks, never pays for them. They are walked forward from the (lifted)
 * start, as far as asked: byte counts are integers below 2^53, so the sums are exact and equal
 * to undoing the trace from the dump.
 */
class LazyTotals implements RunningTotals {
  readonly start: Figures;
  readonly peak: Figures;
  readonly peakAllocatedAt: number;
  readonly peakReservedAt: number;
  readonly lift: { allocated: number; active: number; reserved: number };
  private curves: Curves | undefined;
  /** The forward walk so far: curves filled before entry `at`, and the figures there. */
  private walk:
    | { curves: Curves; at: number; allocated: number; active: number; reserved: number }
    | undefined;

  constructor(
    private readonly trace: DeviceTrace,
    readonly end: Figures,
  ) {
    const w = walkBack(trace, end);
    // No memory figure is below zero: a curve the trace takes there is raised as a whole, by the
    // least that keeps it at or above zero (its shape, peaks' moments and differences unchanged).
    this.lift = {
      allocated: Math.max(0, -w.min.allocated),
      active: Math.max(0, -w.min.active),
      reserved: Math.max(0, -w.min.reserved),
    };
    this.start = lifted(w.cur, this.lift);
    this.peak = lifted(w.peak, this.lift);
    this.peakAllocatedAt = w.peakAllocatedAt;
    this.peakReservedAt = w.peakReservedAt;
  }

  curvesBetween(from: number, to: number): Curves {
    const c = this.curves ?? this.walkTo(to);
    return {
      allocated: c.allocated.subarray(from, to),
      active: c.active.subarray(from, to),
      reserved: c.reserved.subarray(from, to),
    };
  }

  get allocated(): Float64Array {
    return this.curvesOf().allocated;
  }

  allocatedAfterEach(ks: ArrayLike<number>): Float64Array {
    if (this.curves !== undefined) return Float64Array.from(ks, (k) => this.curves!.allocated[k]!);
    // An entry outside the trace reads as the curve's missing value would: NaN.
    const out = new Float64Array(ks.length).fill(Number.NaN);
    const { action, size } = this.trace;
    let allocated = this.start.allocated;
    let q = 0;
    while (q < ks.length && ks[q]! < 0) q++;
    for (let i = 0; q < ks.length && i < this.trace.length; i++) {
      const a = action[i]!;
      const v = size[i]!;
      const bytes = Number.isNaN(v) ? 0 : v; // as walkTo
      if (a === Action.alloc) allocated += bytes;
      else if (a === Action.free_requested || a === Action.free) allocated -= bytes;
      while (q < ks.length && ks[q] === i) out[q++] = allocated;
    }
    return out;
  }

  get active(): Float64Array {
    return this.curvesOf().active;
  }

  get reserved(): Float64Array {
    return this.curvesOf().reserved;
  }

  private curvesOf(): Curves {
    return this.curves ?? this.walkTo(this.trace.length);
  }

  /** Walks the curves forward up to entry `to`; the arrays, filled that far. */
  private walkTo(to: number): Curves {
    const n = this.trace.length;
    const w = (this.walk ??= {
      curves: { allocated: new Float64Array(n), active: new Float64Array(n), reserved: new Float64Array(n) },
      at: 0,
      allocated: this.start.allocated,
      active: this.start.active,
      reserved: this.start.reserved,
    });
    const { action, size } = this.trace;
    const out = w.curves;
    let { allocated, active, reserved } = w;
    const end = Math.min(to, n);
    for (let i = w.at; i < end; i++) {
      const a = action[i]!;
      const v = size[i]!;
      const bytes = Number.isNaN(v) ? 0 : v; // as walkBack: a size the entry lacks counts 0
      if (a === Action.alloc) {
        allocated += bytes;
        active += bytes;
      } else if (a === Action.free_requested || a === Action.free) {
        allocated -= bytes;
        if (a === Action.free) active -= bytes;
      } else if (a === Action.free_completed) {
        active -= bytes;
      } else if (a === Action.segment_alloc || a === Action.segment_map) {
        reserved += bytes;
      } else if (a === Action.segment_free || a === Action.segment_unmap) {
        reserved -= bytes;
      }
      out.allocated[i] = allocated;
      out.active[i] = active;
      out.reserved[i] = reserved;
    }
    if (end > w.at) Object.assign(w, { at: end, allocated, active, reserved });
    if (w.at === n) {
      this.curves = out;
      this.walk = undefined;
    }
    return out;
  }
}

function lifted(f: Figures, lift: LazyTotals['lift']): Figures {
  return {
    ...f,
    allocated: f.allocated + lift.allocated,
    active: f.active + lift.active,
    reserved: f.reserved + lift.reserved,
  };
}

/**
 * Undoes the trace from the dump-time figures: the start, the peaks and their moments, the lows.
 * The figures live in locals, not in a Figures object: byte counts outgrow small integers
 * mid-walk, and each such field change gave the object a new map and deoptimized the loop
 * (measured: 3-4x slower on a second walk of a 7.5M-entry trace).
 */
function walkBack(trace: DeviceTrace, end: Figures) {
  const n = trace.length;
  let { allocated, active, reserved, allocations, activeAllocations, segments } = end;
  let [pAllocated, pActive, pReserved] = [allocated, active, reserved];
  let [pAllocations, pActiveAllocations, pSegments] = [allocations, activeAllocations, segments];
  let peakAllocatedAt = n - 1;
  let peakReservedAt = n - 1;
  let [mAllocated, mActive, mReserved] = [allocated, active, reserved];
  const { action, size } = trace;
  for (let i = n - 1; i >= 0; i--) {
    const a = action[i]!;
    const v = size[i]!;
    const bytes = Number.isNaN(v) ? 0 : v; // NaN: a size the entry lacks
    // Undoing an alloc (or a segment_alloc/map) lowers the figures, a free raises them.
    if (a === Action.alloc) {
      allocated -= bytes;
      active -= bytes;
      allocations--;
      activeAllocations--;
    } else if (a === Action.free_requested || a === Action.free) {
      allocated += bytes;
      allocations++;
      if (a === Action.free) {
        active += bytes;
        activeAllocations++;
      }
    } else if (a === Action.free_completed) {
      active += bytes;
      activeAllocations++;
    } else if (a === Action.segment_alloc || a === Action.segment_map) {
      reserved -= bytes;
      if (a === Action.segment_alloc) segments--;
    } else if (a === Action.segment_free || a === Action.segment_unmap) {
      reserved += bytes;
      if (a === Action.segment_free) segments++;
    }
    // Ties go to the earliest moment the peak was reached.
    if (allocated >= pAllocated) {
      peakAllocatedAt = i - 1;
      pAllocated = allocated;
    }
    if (reserved >= pReserved) {
      peakReservedAt = i - 1;
      pReserved = reserved;
    }
    if (allocated < mAllocated) mAllocated = allocated;
    if (active < mActive) mActive = active;
    if (reserved < mReserved) mReserved = reserved;
    if (active > pActive) pActive = active;
    if (allocations > pAllocations) pAllocations = allocations;
    if (activeAllocations > pActiveAllocations) pActiveAllocations = activeAllocations;
    if (segments > pSegments) pSegments = segments;
  }
  if (n === 0) peakAllocatedAt = peakReservedAt = -1;
  const start = { allocated, active, reserved, allocations, activeAllocations, segments };
  const peak = {
    allocated: pAllocated,
    active: pActive,
    reserved: pReserved,
    allocations: pAllocations,
    activeAllocations: pActiveAllocations,
    segments: pSegments,
  };
  const min = { allocated: mAllocated, active: mActive, reserved: mReserved };
  return { cur: start, peak, peakAllocatedAt, peakReservedAt, min };
}
