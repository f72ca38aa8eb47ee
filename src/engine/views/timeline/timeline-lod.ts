import { stackAfter } from '../../derived/state/live-order.js';
import type { DeviceModel } from '../../model/snapshot.js';
import { firstAtOrAfter, type TimelineAxis } from './timeline-axis.js';

/**
 * What the active-memory timeline draws in each pixel column of a window, computed from the
 * model so the page never holds or walks millions of allocations.
 *
 * Every live allocation of a column is placed, in memory_viz's stacking order (live-order.ts);
 * an allocation at least one pixel tall gets its own run; consecutive ones under a pixel are
 * merged into runs of about one pixel (alloc -1) whose heights are exactly their sums, each
 * coloured after its largest member, as a mipmap would. Each column shows the state
 * at its highest point (the entry with the most active memory among those it covers, or the
 * state carried into it), so the envelope is exact at any zoom. Identical runs in neighbouring
 * columns are merged, so a quiet stretch costs one rectangle per allocation.
 */
export interface TimelineRequest {
  axis: TimelineAxis;
  /** Visible window on the axis: entry indices (entry i spans [i, i+1)) or time_us. */
  x0: number;
  x1: number;
  /** Pixel columns and rows of the plot. */
  columns: number;
  rows: number;
  /**
   * The least top of the y axis in bytes: a horizontal zoom keeps the whole trace's top (the y
   * axis stays put as the window narrows); absent, the top follows the window's highest point.
   */
  yTop?: number;
}

export interface TimelineLod {
  columns: number;
  /** Top of the y axis: the highest active or reserved bytes in the window. */
  yMax: number;
  /** Entry whose after-state each column shows (-1: the state before the first entry). */
  sample: Int32Array;
  /** Active bytes (stack top) of each column's sample. */
  active: Float64Array;
  /** Highest reserved bytes within each column. */
  reserved: Float64Array;
  runs: number;
  /** Run r covers columns [runX0[r], runX1[r]) and bytes [runY0[r], runY1[r]). */
  runX0: Int32Array;
  runX1: Int32Array;
  runY0: Float64Array;
  runY1: Float64Array;
  /** Allocation id, or -1 for merged allocations under one pixel tall. */
  runAlloc: Int32Array;
  /** The allocation whose colour the run takes: itself, or the largest one merged into it. */
  runTone: Int32Array;
  /** Allocations in the run (1 unless merged). */
  runCount: Int32Array;
  /** Allocations given a run of their own in at least one column / placed in merged runs (counted per column). */
  drawnAllocations: number;
  mergedPlacements: number;
}

/**
 * `marked` (1 per allocation id, e.g. search matches): a merged run takes its colour from its
 * largest marked member when it has one, so a highlighted match is never hidden in a merge.
 */
export function timelineLod(d: DeviceModel, req: TimelineRequest, marked?: Uint8Array): TimelineLod {
  const { columns, yMax, sample, active, reserved } = outlineColumns(d, req);
  const runs = new RunBuilder();
  const stack = new LiveStack(d, sample[0]!, marked);
  const minBytes = yMax / Math.max(1, req.rows);
  for (let c = 0; c < columns; c++) {
    stack.advanceTo(sample[c]!);
    stack.emit(c, minBytes, runs);
  }
  return { columns, yMax, sample, active, reserved, ...runs.result() };
}

/**
 * The window's outline alone: each column's active and reserved bytes, as timelineLod gives them,
 * and no runs. It reads only the running totals (one pass over the window's entries), so a page
 * can draw the shape of memory at once while the allocations are stacked (a whole 1 GB trace:
 * ~0.5-1 s).
 */
export function timelineOutline(d: DeviceModel, req: TimelineRequest): TimelineLod {
  return { ...outlineColumns(d, req), ...new RunBuilder().result() };
}

function outlineColumns(d: DeviceModel, req: TimelineRequest) {
  const columns = Math.max(1, Math.floor(req.columns));
  const { sample, active, reserved } = sampleColumns(d, req, columns);
  let yMax = Math.max(1, req.yTop ?? 0);
  for (let c = 0; c < columns; c++) yMax = Math.max(yMax, active[c]!, reserved[c]!);
  return { columns, yMax, sample, active, reserved };
}

/**
 * Each column's sample (the first entry of its highest active bytes, or the state carried into
 * it), that sample's active bytes and the column's highest reserved bytes (the carried state's
 * included), read in one pass over the curves' parts: before the curves are walked, the pass
 * fills none of them (the first outline of a 1 GB trace waited ~140 ms on walking 180 MB).
 */
function sampleColumns(d: DeviceModel, req: TimelineRequest, columns: number) {
  const bounds = columnBounds(d, req, columns);
  const sampler = new ColumnSampler(bounds, d.totals.start);
  // From the entry before the first column: its state is carried into the first column.
  d.totals.scanCurves(Math.max(0, bounds[0]! - 1), bounds[columns]!, (part, at) =>
    sampler.read(part.active, part.reserved, at),
  );
  return sampler.finish();
}

/** Column c covers entries [bounds[c], bounds[c + 1]) (empty where the axis goes back). */
function columnBounds(d: DeviceModel, req: TimelineRequest, columns: number): Int32Array {
  const bounds = new Int32Array(columns + 1);
  const step = (req.x1 - req.x0) / columns;
  bounds[0] = firstAtOrAfter(d, req.axis, req.x0);
  for (let c = 0; c < columns; c++)
    bounds[c + 1] = Math.max(bounds[c]!, firstAtOrAfter(d, req.axis, req.x0 + (c + 1) * step));
  return bounds;
}

/**
 * Reads the curves' values entry after entry and closes each column as the next one begins: the
 * first entry of its highest active bytes (or the state carried into it), and its highest reserved.
 */
class ColumnSampler {
  readonly sample: Int32Array;
  readonly active: Float64Array;
  readonly reserved: Float64Array;
  /** Column c - 1 is open (c = 0: none yet, entries before the window are only carried in). */
  private c = 0;
  private best = -1;
  private bestActive: number;
  private maxReserved: number;
  /** The state after the last entry read. */
  private lastActive: number;
  private lastReserved: number;

  constructor(
    private readonly bounds: Int32Array,
    start: { active: number; reserved: number },
  ) {
    const columns = bounds.length - 1;
    this.sample = new Int32Array(columns);
    this.active = new Float64Array(columns);
    this.reserved = new Float64Array(columns);
    this.bestActive = this.lastActive = start.active;
    this.maxReserved = this.lastReserved = start.reserved;
  }

  /** The values after entries at, at + 1, ...: the next after those read before. */
  read(active: Float64Array, reserved: Float64Array, at: number): void {
    const n = active.length;
    for (let j = 0; j < n; ) {
      if (at + j >= this.bounds[this.c]!) this.openAt(at + j);
      // The open column's entries in this part, in locals.
      const stop = Math.min(n, this.bounds[this.c]! - at);
      let { best, bestActive, maxReserved } = this;
      for (; j < stop; j++) {
        const a = active[j]!;
        const r = reserved[j]!;
        if (a > bestActive) {
          best = at + j;
          bestActive = a;
        }
        if (r > maxReserved) maxReserved = r;
      }
      this.best = best;
      this.bestActive = bestActive;
      this.maxReserved = maxReserved;
      this.lastActive = active[j - 1]!;
      this.lastReserved = reserved[j - 1]!;
    }
  }

  /** Closes the columns left: past the last entry read, they hold its state. */
  finish(): { sample: Int32Array; active: Float64Array; reserved: Float64Array } {
    this.openAt(Number.POSITIVE_INFINITY);
    return { sample: this.sample, active: this.active, reserved: this.reserved };
  }

  /**
   * Closes the columns that end at entry k and opens the next: entries are read one after another,
   * so a column opens at its first entry (or at the end), with the state before it carried in.
   */
  private openAt(k: number): void {
    const { bounds } = this;
    for (; this.c < bounds.length && bounds[this.c]! <= k; this.c++) {
      if (this.c > 0) {
        this.sample[this.c - 1] = this.best;
        this.active[this.c - 1] = this.bestActive;
        this.reserved[this.c - 1] = this.maxReserved;
      }
      this.best = bounds[this.c]! - 1;
      this.bestActive = this.lastActive;
      this.maxReserved = this.lastReserved;
    }
  }
}

/**
 * The entry each column shows: the highest of those it covers by `higher` (a before b), or the
 * state carried in from before it when none is higher (-1: the state before the first entry).
 */
export function columnSamples(
  d: DeviceModel,
  req: TimelineRequest,
  columns: number,
  higher: (a: number, b: number) => boolean,
): Int32Array {
  const sample = new Int32Array(columns);
  const step = (req.x1 - req.x0) / columns;
  let lo = firstAtOrAfter(d, req.axis, req.x0);
  for (let c = 0; c < columns; c++) {
    const hi = firstAtOrAfter(d, req.axis, req.x0 + (c + 1) * step);
    let best = lo - 1;
    for (let k = lo; k < hi; k++) if (higher(k, best)) best = k;
    sample[c] = best;
    lo = Math.max(lo, hi);
  }
  return sample;
}

/**
 * Live allocations as a doubly linked list in stacking order, stepped forward entry by entry:
 * a new allocation always goes on top (it is the newest), a freed one is unlinked from anywhere.
 */
class LiveStack {
  private readonly list: StackList;
  private at: number;

  constructor(
    private readonly d: DeviceModel,
    from: number,
    private readonly marked?: Uint8Array,
  ) {
    this.list = new StackList(d.allocations.count);
    for (const id of stackAfter(d, from)) this.list.push(id);
    this.at = from;
  }

  advanceTo(k: number): void {
    const a = this.d.allocations;
    for (let i = this.at + 1; i <= k; i++) {
      const id = a.ofEntry[i]!;
      if (id < 0) continue;
      if (a.start[id] === i) this.list.push(id);
      if (a.end[id] === i) this.list.unlink(id);
    }
    this.at = Math.max(this.at, k);
  }

  emit(column: number, minBytes: number, runs: RunBuilder): void {
    emitColumn(this.list, this.d.allocations.size, column, minBytes, runs, this.marked);
  }
}

/** Ids in stacking order, bottom first, as a doubly linked list: push on top, unlink anywhere. */
export class StackList {
  readonly next: Int32Array;
  private readonly prev: Int32Array;
  head = -1;
  private tail = -1;

  constructor(ids: number) {
    this.next = new Int32Array(ids);
    this.prev = new Int32Array(ids);
  }

  push(id: number): void {
    this.prev[id] = this.tail;
    this.next[id] = -1;
    if (this.tail >= 0) this.next[this.tail] = id;
    else this.head = id;
    this.tail = id;
  }

  unlink(id: number): void {
    const p = this.prev[id]!;
    const n = this.next[id]!;
    if (p >= 0) this.next[p] = n;
    else this.head = n;
    if (n >= 0) this.prev[n] = p;
    else this.tail = p;
  }
}

/**
 * One column's runs from a stack bottom-up: an id at least `minBytes` tall gets its own run,
 * consecutive smaller ones merge into runs of about `minBytes` coloured after their largest
 * (marked first) member.
 */
export function emitColumn(
  stack: StackList,
  size: Float64Array,
  column: number,
  minBytes: number,
  runs: RunBuilder,
  marked?: Uint8Array,
): void {
  runs.beginColumn(column);
  emitStack(stack, size, 0, minBytes, runs, marked);
  runs.endColumn();
}

/** A stack's runs from `base` bytes up, into the column begun; returns its top. */
export function emitStack(
  stack: Pick<StackList, 'head' | 'next'>,
  size: Float64Array,
  base: number,
  minBytes: number,
  runs: RunBuilder,
  marked?: Uint8Array,
): number {
  let y = base;
  // The open merged run: where it starts (-1: none), its largest member, how many it holds.
  let from = -1;
  let tone = -1;
  let largest = 0;
  let count = 0;
  let toneMarked = false;
  for (let id = stack.head; id !== -1; id = stack.next[id]!) {
    const s = size[id]!;
    if (s >= minBytes) {
      if (from >= 0) runs.add(from, y, -1, tone, count);
      from = -1;
      runs.add(y, y + s, id, id, 1);
    } else {
      if (from < 0) {
        from = y;
        largest = -1;
        count = 0;
        toneMarked = false;
      }
      const isMarked = marked !== undefined && marked[id] === 1;
      if ((isMarked && !toneMarked) || (isMarked === toneMarked && s > largest)) {
        tone = id;
        largest = s;
        toneMarked = isMarked;
      }
      count++;
      runs.mergedPlacements++;
    }
    y += s;
    if (from >= 0 && y - from >= minBytes) {
      runs.add(from, y, -1, tone, count);
      from = -1;
    }
  }
  if (from >= 0) runs.add(from, y, -1, tone, count);
  return y;
}

/**
 * Growable run columns. A run identical to one that ended at the previous column (same
 * allocation, same bytes) is extended instead of repeated; both columns list runs bottom-up,
 * so one pointer walks the previous column's open runs alongside.
 */
export class RunBuilder {
  count = 0;
  mergedPlacements = 0;
  private readonly drawn = new Set<number>();
  private x0 = new Int32Array(1024);
  private x1 = new Int32Array(1024);
  private y0 = new Float64Array(1024);
  private y1 = new Float64Array(1024);
  private alloc = new Int32Array(1024);
  private tone = new Int32Array(1024);
  private members = new Int32Array(1024);
  private open: number[] = [];
  private nextOpen: number[] = [];
  private cursor = 0;
  private column = 0;

  beginColumn(column: number): void {
    this.column = column;
    this.cursor = 0;
    this.nextOpen = [];
  }

  add(y0: number, y1: number, alloc: number, tone: number, count: number): void {
    const open = this.open;
    while (this.cursor < open.length && this.y0[open[this.cursor]!]! < y0) this.cursor++;
    const r = open[this.cursor];
    if (
      r !== undefined &&
      this.y0[r] === y0 &&
      this.y1[r] === y1 &&
      this.alloc[r] === alloc &&
      this.tone[r] === tone &&
      this.members[r] === count
    ) {
      this.x1[r] = this.column + 1;
      this.nextOpen.push(r);
      return;
    }
    if (alloc >= 0) this.drawn.add(alloc);
    const added = this.append(y0, y1, alloc);
    this.tone[added] = tone;
    this.members[added] = count;
    this.nextOpen.push(added);
  }

  endColumn(): void {
    this.open = this.nextOpen;
  }

  private append(y0: number, y1: number, alloc: number): number {
    if (this.count === this.x0.length) this.grow();
    const r = this.count++;
    this.x0[r] = this.column;
    this.x1[r] = this.column + 1;
    this.y0[r] = y0;
    this.y1[r] = y1;
    this.alloc[r] = alloc;
    return r;
  }

  private grow(): void {
    const n = this.x0.length * 2;
    const copy = <T extends Int32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(n);
      b.set(a);
      return b;
    };
    this.x0 = copy(this.x0);
    this.x1 = copy(this.x1);
    this.y0 = copy(this.y0);
    this.y1 = copy(this.y1);
    this.alloc = copy(this.alloc);
    this.tone = copy(this.tone);
    this.members = copy(this.members);
  }

  result() {
    const n = this.count;
    return {
      runs: n,
      runX0: this.x0.slice(0, n),
      runX1: this.x1.slice(0, n),
      runY0: this.y0.slice(0, n),
      runY1: this.y1.slice(0, n),
      runAlloc: this.alloc.slice(0, n),
      runTone: this.tone.slice(0, n),
      runCount: this.members.slice(0, n),
      drawnAllocations: this.drawn.size,
      mergedPlacements: this.mergedPlacements,
    };
  }
}
