import type { Allocations } from './allocations.js';
import { lowerBound } from './lower-bound.js';

/**
 * Which allocations are alive after any trace entry, without replaying the whole trace: the live
 * set is saved every `stride` entries and a query replays at most `stride` entries from the
 * nearest checkpoint. The stride adapts so all checkpoints hold about CHECKPOINT_BUDGET ids.
 * Checkpoints are built on the first query: loading a file for a summary never pays for them.
 */
const CHECKPOINT_BUDGET = 16 * 1024 * 1024;
const MIN_STRIDE = 1024;
/**
 * Queries answered by one scan of the allocations before checkpoints are built: a command that
 * asks about a moment or two (the dump, the peak) never pays for a replay of the whole trace.
 */
const SCANNED_QUERIES = 4;

export class LiveIndex {
  private stride = 0;
  private checkpoints: Int32Array[] | undefined;
  private queries = 0;

  constructor(
    private readonly allocs: Allocations,
    private readonly entries: number,
  ) {}

  /** Allocation ids alive after entry `k` (k = -1: before the first entry), ascending. */
  aliveAfter(k: number): Int32Array {
    const at = Math.max(-1, Math.min(k, this.entries - 1));
    if (this.checkpoints === undefined && ++this.queries <= SCANNED_QUERIES) return this.scan(at);
    const checkpoints = this.build();
    const c = Math.floor((at + 1) / this.stride);
    const live = new Set(checkpoints[c]);
    for (let i = c * this.stride; i <= at; i++) this.step(live, i);
    return Int32Array.from(live).sort();
  }

  /**
   * `aliveAfter` of many entries (ascending) in one pass over the allocations: each id lands in
   * the queries its interval holds, so a hundred moments cost about one scan, not a hundred
   * replays or a checkpoint build. Ids come about in the order of their start, so a cursor finds
   * the first query of each; only the ids some query holds are kept for the second step.
   */
  aliveAfterEach(ks: ArrayLike<number>): Int32Array[] {
    const at = Int32Array.from(ks, (k) => Math.max(-1, Math.min(k, this.entries - 1)));
    const { count, start, end } = this.allocs;
    const sizes = new Int32Array(at.length + 1);
    const span = new QuerySpan(at);
    // (id, first query, last query) of each id some query holds.
    const held: number[] = [];
    for (let id = 0; id < count; id++) {
      if (!span.place(start[id]!, end[id]!) || span.first === span.last) continue;
      held.push(id, span.first, span.last);
      sizes[span.first]!++;
      sizes[span.last]!--;
    }
    const out: Int32Array[] = [];
    for (let q = 0, n = 0; q < at.length; q++) out.push(new Int32Array((n += sizes[q]!)));
    const fill = new Int32Array(at.length);
    for (let h = 0; h < held.length; h += 3)
      for (let q = held[h + 1]!; q < held[h + 2]!; q++) out[q]![fill[q]!++] = held[h]!;
    return out;
  }

  /** The ids whose interval holds entry `at`, by the rule `step` replays. */
  private scan(at: number): Int32Array {
    const a = this.allocs;
    const out = new Int32Array(a.count);
    let n = 0;
    for (let id = 0; id < a.count; id++) {
      const start = a.start[id]!;
      const end = a.end[id]!;
      if ((start === -1 ? end !== -1 : start <= at) && (end === -1 || end > at)) out[n++] = id;
    }
    return out.slice(0, n);
  }

  private build(): Int32Array[] {
    if (this.checkpoints) return this.checkpoints;
    const live = this.aliveAtStart();
    const peak = this.peakLive(live.size);
    this.stride = Math.max(MIN_STRIDE, Math.ceil((this.entries * Math.max(1, peak)) / CHECKPOINT_BUDGET));
    const checkpoints: Int32Array[] = [];
    for (let i = 0; i < this.entries; i++) {
      if (i % this.stride === 0) checkpoints.push(live.ids());
      this.step(live, i);
    }
    if (this.entries % this.stride === 0) checkpoints.push(live.ids());
    this.checkpoints = checkpoints;
    return checkpoints;
  }

  private aliveAtStart(): IdSet {
    const a = this.allocs;
    const live = new IdSet(a.count);
    for (let id = 0; id < a.count; id++) if (a.start[id] === -1 && a.end[id] !== -1) live.add(id);
    return live;
  }

  private peakLive(atStart: number): number {
    let live = atStart;
    let peak = live;
    const a = this.allocs;
    for (let i = 0; i < this.entries; i++) {
      const id = a.ofEntry[i]!;
      if (id < 0) continue;
      if (a.start[id] === i) live++;
      if (a.end[id] === i) live--;
      peak = Math.max(peak, live);
    }
    return peak;
  }

  private step(live: { add(id: number): unknown; delete(id: number): unknown }, i: number): void {
    const id = this.allocs.ofEntry[i]!;
    if (id < 0) return;
    if (this.allocs.start[id] === i) live.add(id);
    if (this.allocs.end[id] === i) live.delete(id);
  }
}

/** The queries (ascending entries) an allocation's interval holds, by the rule of `LiveIndex.scan`. */
class QuerySpan {
  /** Queries [first, last) of the interval last placed. */
  first = 0;
  last = 0;
  /** The last interval's start and first query: the next start at or after it searches on from there. */
  private fromStart = 0;
  private fromQuery = 0;

  constructor(private readonly at: Int32Array) {}

  /** Places the interval [start, end) (start -1: before the window; end -1: never closed); false if it holds no entry. */
  place(start: number, end: number): boolean {
    if (start === -1 && end === -1) return false;
    const at = this.at;
    let f = 0;
    if (start !== -1) {
      f = start >= this.fromStart ? this.fromQuery : lowerBound(at, start);
      while (f < at.length && at[f]! < start) f++;
      this.fromStart = start;
      this.fromQuery = f;
    }
    let l = f;
    if (end === -1) l = at.length;
    else while (l < at.length && at[l]! < end) l++;
    this.first = f;
    this.last = l;
    return true;
  }
}

/**
 * A set of allocation ids on typed arrays: building the checkpoints replays an add and a delete
 * for every allocation of the trace, which a Set of millions of numbers makes the index's cost.
 * Its ids come in no order (a checkpoint's replay sorts its answer).
 */
class IdSet {
  /** Where each id sits in `items`; -1 when absent. */
  private readonly slot: Int32Array;
  private items = new Int32Array(1024);
  size = 0;

  constructor(ids: number) {
    this.slot = new Int32Array(ids).fill(-1);
  }

  add(id: number): void {
    if (this.slot[id]! >= 0) return;
    if (this.size === this.items.length) {
      const more = new Int32Array(this.size * 2);
      more.set(this.items);
      this.items = more;
    }
    this.slot[id] = this.size;
    this.items[this.size++] = id;
  }

  /** The last id moves into the hole: no shifting. */
  delete(id: number): void {
    const j = this.slot[id]!;
    if (j < 0) return;
    const last = this.items[--this.size]!;
    this.items[j] = last;
    this.slot[last] = j;
    this.slot[id] = -1;
  }

  ids(): Int32Array {
    return this.items.slice(0, this.size);
  }
}
