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
  /** Reserved bytes after entry `peakAllocatedAt` (the start's before the first entry). */
  reservedAtAllocatedPeak: number;
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
  /**
   * The three curves after each of the entries `ks` (ascending), as `allocatedAfterEach`: an
   * analysis that reads a few moments (the peak, the segment allocations) never fills the whole
   * curves (24 bytes an entry).
   */
  curvesAfterEach(ks: ArrayLike<number>): Curves;
  /**
   * Hands `visit` the curves after entries `from` .. `to` - 1 in order, in parts (`at`: the entry
   * of a part's first value; a part is valid only during its call). The curves' own arrays once
   * walked; before that, a walk from the nearest mark into one small buffer: reading a window
   * once (the timeline's first outline) never fills the whole curves, 24 bytes an entry.
   */
  scanCurves(from: number, to: number, visit: (part: Curves, at: number) => void): void;
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
  readonly reservedAtAllocatedPeak: number;
  readonly lift: { allocated: number; active: number; reserved: number };
  private curves: Curves | undefined;
  /** The forward walk so far: curves filled before entry `at`, and the figures there. */
  private walk: (Position & { curves: Curves }) | undefined;
  private readonly marks: Marks;

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
    this.reservedAtAllocatedPeak = w.reservedAtAllocatedPeak + this.lift.reserved;
    this.marks = new Marks(trace.length, this.start);
  }

  curvesBetween(from: number, to: number): Curves {
    const c = this.curves ?? this.walkTo(to);
    return slice(c, from, to);
  }

  get allocated(): Float64Array {
    return this.curvesOf().allocated;
  }

  allocatedAfterEach(ks: ArrayLike<number>): Float64Array {
    return this.curvesAfterEach(ks).allocated;
  }

  curvesAfterEach(ks: ArrayLike<number>): Curves {
    const m = ks.length;
    const out: Curves = {
      allocated: new Float64Array(m).fill(Number.NaN),
      active: new Float64Array(m).fill(Number.NaN),
      reserved: new Float64Array(m).fill(Number.NaN),
    };
    const n = this.trace.length;
    // Entries the forward walk has passed are read from its arrays, the rest walked without storing.
    const from: Position = this.curves ? { at: n, ...this.start } : (this.walk ?? { at: 0, ...this.start });
    const walked = this.curves ?? this.walk?.curves;
    let q = 0;
    while (q < m && ks[q]! < 0) q++;
    for (; q < m && ks[q]! < from.at; q++) {
      const k = ks[q]!;
      out.allocated[q] = walked!.allocated[k]!;
      out.active[q] = walked!.active[k]!;
      out.reserved[q] = walked!.reserved[k]!;
    }
    // Each asked entry walked to from where the last ended or from the nearest mark, if later.
    const only = { ks, q };
    let pos = from;
    while (only.q < m && ks[only.q]! < n) {
      const k = ks[only.q]!;
      pos = walkForward(this.trace, this.marks.nearest(k, pos), k + 1, this.marks, out, only);
    }
    return out;
  }

  scanCurves(from: number, to: number, visit: (part: Curves, at: number) => void): void {
    const end = Math.min(to, this.trace.length);
    if (from >= end) return;
    const walked = this.curves ?? this.walk?.curves;
    const known = this.curves ? this.trace.length : (this.walk?.at ?? 0);
    if (from < known) visit(slice(walked!, from, Math.min(end, known)), from);
    if (end <= known) return;
    const start = Math.max(from, known);
    let pos = this.marks.nearest(start, this.walk ?? { at: 0, ...this.start });
    const buffer = scanBuffer();
    while (pos.at < end) {
      const base = pos.at;
      pos = walkForward(
        this.trace,
        pos,
        Math.min(end, base + SCAN_PART),
        this.marks,
        buffer,
        undefined,
        base,
      );
      const skip = Math.max(0, start - base);
      if (skip < pos.at - base) visit(slice(buffer, skip, pos.at - base), base + skip);
    }
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
    if (to > w.at) Object.assign(w, walkForward(this.trace, w, Math.min(to, n), this.marks, w.curves));
    if (w.at === n) {
      this.curves = w.curves;
      this.walk = undefined;
    }
    return w.curves;
  }
}

/** Entries a scan walks into its buffer at a time (24 bytes each: the buffer stays in cache). */
const SCAN_PART = 1 << 14;

function scanBuffer(): Curves {
  return {
    allocated: new Float64Array(SCAN_PART),
    active: new Float64Array(SCAN_PART),
    reserved: new Float64Array(SCAN_PART),
  };
}

function slice(c: Curves, from: number, to: number): Curves {
  return {
    allocated: c.allocated.subarray(from, to),
    active: c.active.subarray(from, to),
    reserved: c.reserved.subarray(from, to),
  };
}

/** Where a forward walk stands: the figures after entry `at` - 1. */
interface Position {
  at: number;
  allocated: number;
  active: number;
  reserved: number;
}

/** Entries between two marks: a walk to any entry from the nearest mark is at most this long. */
const MARK_STRIDE = 1024;

/**
 * The figures before every MARK_STRIDE-th entry, as far as any forward walk has gone (24 bytes
 * per 1,024 entries): the diagnosis asks for the curves at a few thousand moments, analysis by
 * analysis, and only the first of them walks the trace.
 */
class Marks {
  private readonly figures: Curves;
  /** Marks 0 .. known are filled (mark 0: the start). */
  private known = 0;

  constructor(entries: number, start: Figures) {
    const count = Math.floor(entries / MARK_STRIDE) + 1;
    this.figures = {
      allocated: new Float64Array(count),
      active: new Float64Array(count),
      reserved: new Float64Array(count),
    };
    this.set(0, start.allocated, start.active, start.reserved);
  }

  set(j: number, allocated: number, active: number, reserved: number): void {
    this.figures.allocated[j] = allocated;
    this.figures.active[j] = active;
    this.figures.reserved[j] = reserved;
  }

  /** A walk from `from` reached entry `to`: the marks it set join the filled ones (it began at or before the next). */
  reached(to: number): void {
    this.known = Math.max(this.known, Math.floor((to - 1) / MARK_STRIDE));
  }

  /** Where a walk to entry `k` starts: the nearest filled mark at or before it, unless `pos` is nearer. */
  nearest(k: number, pos: Position): Position {
    const j = Math.min(Math.floor(k / MARK_STRIDE), this.known);
    if (j * MARK_STRIDE <= pos.at) return pos;
    const f = this.figures;
    return {
      at: j * MARK_STRIDE,
      allocated: f.allocated[j]!,
      active: f.active[j]!,
      reserved: f.reserved[j]!,
    };
  }
}

/**
 * Walks entries `from.at` .. `to` - 1 forward, setting the marks it passes and writing the
 * figures after each entry into `out` at its entry less `base`, or (`only`) after the entries
 * `only.ks[only.q..]` (ascending) at their index in ks, moving `only.q` past them.
 */
function walkForward(
  trace: DeviceTrace,
  from: Position,
  to: number,
  marks: Marks,
  out: Curves,
  only?: { ks: ArrayLike<number>; q: number },
  base = 0,
): Position {
  const { action, size } = trace;
  let { allocated, active, reserved } = from;
  const ks = only?.ks;
  let q = only?.q ?? 0;
  for (let i = from.at; i < to; i++) {
    if (i % MARK_STRIDE === 0) marks.set(i / MARK_STRIDE, allocated, active, reserved);
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
    if (ks === undefined) {
      out.allocated[i - base] = allocated;
      out.active[i - base] = active;
      out.reserved[i - base] = reserved;
    } else
      for (; q < ks.length && ks[q] === i; q++) {
        out.allocated[q] = allocated;
        out.active[q] = active;
        out.reserved[q] = reserved;
      }
  }
  if (only !== undefined) only.q = q;
  if (to > from.at) marks.reached(to);
  return { at: Math.max(from.at, to), allocated, active, reserved };
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
  let reservedAtAllocatedPeak = reserved;
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
      reservedAtAllocatedPeak = reserved;
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
  return { cur: start, peak, peakAllocatedAt, peakReservedAt, reservedAtAllocatedPeak, min };
}
