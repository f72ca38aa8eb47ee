import { occupiedBytes } from '../../derived/state/free-blocks.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { reservedRangesAfter } from '../../model/state-at.js';
import { Action } from '../../model/trace-columns.js';
import { dumpOwner, type ReservedPieces, reservedPieces, segmentOfOwner } from './frag-span-owners.js';

/**
 * Non-releasable memory over the whole trace in one forward pass, by the rules of the detailed
 * estimate (`estimatedFreeState`): per reserved span, the bytes of live allocations in it (an
 * allocation alive at dump taking its block's size, one freed in the window its request rounded
 * to 512). A span holding at least one is inactive split by its free rest; one holding none is
 * releasable; mapped ranges of a dump-time expandable segment count as neither.
 */
export interface FragSweep {
  /** Per queried entry (in the order given): the figures after it. */
  inactive_split_bytes: Float64Array;
  releasable_bytes: Float64Array;
  /** The entry after which inactive split bytes were largest (first such); -1: before the first entry. */
  peak_after: number;
  peak_inactive_split_bytes: number;
  peak_releasable_bytes: number;
}

/** `after`: entries to report, ascending (-1 allowed: the state before the first entry). */
export function fragSweep(s: Snapshot, d: DeviceModel, after: ArrayLike<number>): FragSweep {
  const spans = new Spans(s);
  const pieces = reservedPieces(s, d);
  for (const r of reservedRangesAfter(s, d, -1)) {
    spans.insert(r.address, r.address + r.size, r.segment >= 0 ? dumpOwner(r.segment) : r.event);
  }
  const a = d.allocations;
  const occupied = occupiedBytes(s, d);
  for (let id = 0; id < a.count; id++) {
    if (a.start[id] === -1 && a.end[id] !== -1) spans.occupy(a.addr[id]!, occupied(id), 1);
  }
  const out: FragSweep = {
    inactive_split_bytes: new Float64Array(after.length),
    releasable_bytes: new Float64Array(after.length),
    peak_after: -1,
    peak_inactive_split_bytes: spans.inactive,
    peak_releasable_bytes: spans.releasable,
  };
  let q = record(out, after, 0, -1, spans);
  const t = d.trace;
  const action = t.action;
  const { ofEntry, start, end } = a;
  for (let i = 0; i < t.length; i++) {
    const act = action[i]!;
    if (act >= Action.segment_alloc && act <= Action.segment_unmap) reserve(d, spans, pieces, i);
    else {
      const id = ofEntry[i]!;
      // The live index's rule: alive from its start entry up to (not after) its end entry.
      if (id >= 0 && start[id] === i) spans.occupy(a.addr[id]!, occupied(id), 1);
      if (id >= 0 && end[id] === i) spans.occupy(a.addr[id]!, occupied(id), -1);
    }
    if (spans.inactive > out.peak_inactive_split_bytes) {
      out.peak_after = i;
      out.peak_inactive_split_bytes = spans.inactive;
      out.peak_releasable_bytes = spans.releasable;
    }
    if (q < after.length && after[q] === i) q = record(out, after, q, i, spans);
  }
  return out;
}

function reserve(d: DeviceModel, spans: Spans, pieces: ReservedPieces, i: number): void {
  const t = d.trace;
  const act = t.action[i]!;
  if (act === Action.segment_alloc || act === Action.segment_map) {
    const p = pieces.byEntry.get(i)!;
    for (let j = 0; j < p.length; j += 3) spans.insert(p[j]!, p[j + 1]!, p[j + 2]!);
  } else spans.release(t.addr[i]!, t.addr[i]! + t.size[i]!, i);
}

function record(out: FragSweep, after: ArrayLike<number>, q: number, i: number, spans: Spans): number {
  while (q < after.length && after[q]! <= i) {
    out.inactive_split_bytes[q] = spans.inactive;
    out.releasable_bytes[q] = spans.releasable;
    q++;
  }
  return q;
}

/** Reserved spans sorted by address, each with its owner and the live bytes in it. */
class Spans {
  private readonly lo: number[] = [];
  private readonly hi: number[] = [];
  private readonly owner: number[] = [];
  private readonly used: number[] = [];
  private readonly counted: boolean[] = [];
  inactive = 0;
  releasable = 0;

  constructor(private readonly s: Snapshot) {}

  /** Adds [lo, hi) for `owner`, joining a touching span of the same owner. */
  insert(lo: number, hi: number, owner: number): void {
    let j = this.find(lo) + 1;
    let used = 0;
    if (j > 0 && this.owner[j - 1] === owner && this.hi[j - 1] === lo) {
      j--;
      lo = this.lo[j]!;
      used += this.used[j]!;
      this.remove(j);
    }
    if (j < this.lo.length && this.owner[j] === owner && this.lo[j] === hi) {
      hi = this.hi[j]!;
      used += this.used[j]!;
      this.remove(j);
    }
    const seg = segmentOfOwner(owner);
    const counted = seg < 0 || !this.s.tables.segments[seg]!.expandable;
    this.lo.splice(j, 0, lo);
    this.hi.splice(j, 0, hi);
    this.owner.splice(j, 0, owner);
    this.used.splice(j, 0, 0);
    this.counted.splice(j, 0, counted);
    this.tally(j, 1);
    this.setUsed(j, used);
  }

  /** Drops the spans of [lo, hi) that this release owns. */
  release(lo: number, hi: number, owner: number): void {
    for (let j = Math.max(0, this.find(lo)); j < this.lo.length && this.lo[j]! < hi; ) {
      if (this.owner[j] === owner && this.hi[j]! > lo) this.remove(j);
      else j++;
    }
  }

  /** Adds (sign 1) or removes (-1) an allocation at [addr, addr + bytes) in the spans it overlaps. */
  occupy(addr: number, bytes: number, sign: number): void {
    const end = addr + bytes;
    let j = this.find(addr);
    // An allocation starting outside every span is in none (as in the estimate).
    if (j < 0 || this.hi[j]! <= addr) return;
    if (end <= this.hi[j]!) {
      this.setUsed(j, this.used[j]! + sign * bytes);
      return;
    }
    for (; j < this.lo.length && this.lo[j]! < end; j++) {
      const part = Math.min(end, this.hi[j]!) - Math.max(addr, this.lo[j]!);
      if (part > 0) this.setUsed(j, this.used[j]! + sign * part);
    }
  }

  /** Index of the last span starting at or below `addr`; -1 when none. */
  private find(addr: number): number {
    let lo = 0;
    let hi = this.lo.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.lo[mid]! <= addr) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  private setUsed(j: number, used: number): void {
    this.tally(j, -1);
    this.used[j] = used;
    this.tally(j, 1);
  }

  private remove(j: number): void {
    this.tally(j, -1);
    for (const col of [this.lo, this.hi, this.owner, this.used]) col.splice(j, 1);
    this.counted.splice(j, 1);
  }

  /** Adds (1) or takes back (-1) span j's share of the two totals. */
  private tally(j: number, sign: number): void {
    if (!this.counted[j]) return;
    const size = this.hi[j]! - this.lo[j]!;
    const used = this.used[j]!;
    if (used > 0) this.inactive += sign * (size - used);
    else this.releasable += sign * size;
  }
}
