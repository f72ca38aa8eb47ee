import { lowerBound } from './lower-bound.js';
import type { DeviceModel, Snapshot } from './snapshot.js';
import { Action } from './trace-columns.js';

/**
 * A reserved address range at some moment: a segment, or the mapped part of an expandable one. */
export interface ReservedRange {
  address: number;
  size: number;
  /** Index into `Snapshot.tables.segments` when this very range is still reserved at dump, else -1. */
  segment: number;
  /**
   * For a range released between this moment and the dump (segment -1): the segment_alloc/map at
   * or before this moment that reserved it when the trace holds it, else the segment_free/unmap
   * that released it. -1 for a range still reserved at dump.
   */
  event: number;
  /** The stream of its segment, or of that event. */
  stream: number;
}

export interface AllocatorState {
  /** The trace entry after which this is the state (-1: before the first entry). */
  after: number;
  reserved: ReservedRange[];
  /** Allocation ids (see `Allocations`) alive at that moment, ascending. */
  allocations: Int32Array;
}

/**
 * The allocator's state after trace entry `k`: reserved ranges replayed backwards from the
 * dump-time segments over the segment events after k, and the allocations alive then from the
 * live index (at most one checkpoint stride of replay).
 */
export function stateAfter(s: Snapshot, d: DeviceModel, k: number): AllocatorState {
  const after = clampEntry(d, k);
  return { after, reserved: reservedAfter(s, d, after), allocations: d.live.aliveAfter(after) };
}

/** `stateAfter` of many entries (ascending), the live sets found in one pass (LiveIndex.aliveAfterEach). */
export function statesAfter(s: Snapshot, d: DeviceModel, ks: readonly number[]): AllocatorState[] {
  const after = ks.map((k) => clampEntry(d, k));
  const alive = d.live.aliveAfterEach(after);
  const reserved = reservedAfterEach(s, d, after);
  return after.map((k, i) => ({ after: k, reserved: reserved[i]!, allocations: alive[i]! }));
}

/** Only the reserved ranges of `stateAfter`: no live index needed (it is built on first use). */
export function reservedRangesAfter(s: Snapshot, d: DeviceModel, k: number): ReservedRange[] {
  return reservedAfter(s, d, clampEntry(d, k));
}

function clampEntry(d: DeviceModel, k: number): number {
  return Math.max(-1, Math.min(k, d.trace.length - 1));
}

/** A range during the backward replay, carrying who it belongs to. */
interface Span {
  lo: number;
  hi: number;
  segment: number;
  event: number;
}

/**
 * Identity travels with each range through the replay, never looked up by address: the driver
 * hands a freed address range to later segments (of other streams and pools), so the dump-time
 * segment at an address may not be the one that held it earlier.
 */
function reservedAfter(s: Snapshot, d: DeviceModel, k: number): ReservedRange[] {
  return reservedAfterEach(s, d, [k])[0]!;
}

/**
 * `reservedAfter` of many entries (ascending) in one backward replay: the latest entry's ranges
 * first, each earlier one going on from there instead of from the dump again.
 */
function reservedAfterEach(s: Snapshot, d: DeviceModel, ks: readonly number[]): ReservedRange[][] {
  let spans: Span[] = d.segmentIds.map((id) => {
    const seg = s.tables.segments[id]!;
    return { lo: seg.address, hi: seg.address + seg.totalSize, segment: id, event: -1 };
  });
  const t = d.trace;
  const events = segmentEntries(d);
  const out: ReservedRange[][] = new Array(ks.length);
  let e = 0;
  for (let q = ks.length - 1; q >= 0; q--) {
    for (; e < events.length && events[e]! > ks[q]!; e++) {
      const i = events[e]!;
      const a = t.action[i]!;
      const range: Span = { lo: t.addr[i]!, hi: t.addr[i]! + t.size[i]!, segment: -1, event: i };
      // Undo: what was allocated/mapped at i was not reserved before it, and vice versa.
      spans =
        a === Action.segment_alloc || a === Action.segment_map ? subtract(spans, range) : union(spans, range);
    }
    out[q] = rangesOf(s, d, spans, events, e);
  }
  return out;
}

/** The spans as ranges, each released one named by its reserver (on copies: the replay goes on). */
function rangesOf(s: Snapshot, d: DeviceModel, from: Span[], events: Int32Array, e: number): ReservedRange[] {
  const spans = from.map((r) => ({ ...r })).sort((x, y) => x.lo - y.lo);
  findReservers(d, spans, events, e);
  const t = d.trace;
  return spans.map((r) => ({
    address: r.lo,
    size: r.hi - r.lo,
    segment: r.segment,
    event: r.event,
    stream:
      r.segment >= 0 ? s.tables.segments[r.segment]!.stream : s.traceColumns.streams[t.stream[r.event]!]!,
  }));
}

/** Gives each released span the newest segment_alloc/map at or before k over its start, if any. */
function findReservers(d: DeviceModel, spans: Span[], events: Int32Array, from: number): void {
  const open = spans.filter((r) => r.segment < 0);
  const starts = open.map((r) => r.lo);
  const found = new Uint8Array(open.length);
  let left = open.length;
  const t = d.trace;
  for (let e = from; e < events.length && left > 0; e++) {
    const i = events[e]!;
    const a = t.action[i]!;
    if (a !== Action.segment_alloc && a !== Action.segment_map) continue;
    const lo = t.addr[i]!;
    for (let j = lowerBound(starts, lo); j < starts.length && starts[j]! < lo + t.size[i]!; j++) {
      if (found[j]) continue;
      found[j] = 1;
      open[j]!.event = i;
      left--;
    }
  }
}

/** Removes [lo, hi) from a set of disjoint spans; what is left of each keeps its identity. */
function subtract(spans: Span[], cut: Span): Span[] {
  const out: Span[] = [];
  for (const r of spans) {
    if (r.hi <= cut.lo || r.lo >= cut.hi) out.push(r);
    else {
      if (r.lo < cut.lo) out.push({ ...r, hi: cut.lo });
      if (r.hi > cut.hi) out.push({ ...r, lo: cut.hi });
    }
  }
  return out;
}

/** Adds a released range, merging with spans it overlaps (touching segments stay apart). */
function union(spans: Span[], add: Span): Span[] {
  const out: Span[] = [];
  const merged = { ...add };
  for (const r of spans) {
    if (r.hi <= merged.lo || r.lo >= merged.hi) out.push(r);
    else {
      merged.lo = Math.min(r.lo, merged.lo);
      merged.hi = Math.max(r.hi, merged.hi);
    }
  }
  out.push(merged);
  return out;
}

const cache = new WeakMap<DeviceModel, Int32Array>();

/** Indices of the segment events of a device, newest first (computed once per device). */
export function segmentEntries(d: DeviceModel): Int32Array {
  let list = cache.get(d);
  if (list === undefined) {
    const out: number[] = [];
    for (let i = d.trace.length - 1; i >= 0; i--) {
      const a = d.trace.action[i]!;
      if (a >= Action.segment_alloc && a <= Action.segment_unmap) out.push(i);
    }
    list = Int32Array.from(out);
    cache.set(d, list);
  }
  return list;
}
