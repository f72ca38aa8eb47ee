import type { DeviceModel, Snapshot } from './snapshot.js';
import { Action } from './trace-columns.js';

/**
 * A reserved address range at some moment: a segment, or the mapped part of an expandable one. */
export interface ReservedRange {
  address: number;
  size: number;
  /** Index into `Snapshot.tables.segments` when the range is still reserved at dump, else -1. */
  segment: number;
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
  const after = Math.max(-1, Math.min(k, d.trace.length - 1));
  return { after, reserved: reservedAfter(s, d, after), allocations: d.live.aliveAfter(after) };
}

function reservedAfter(s: Snapshot, d: DeviceModel, k: number): ReservedRange[] {
  let ranges: [number, number][] = d.segmentIds.map((id) => {
    const seg = s.tables.segments[id]!;
    return [seg.address, seg.address + seg.totalSize];
  });
  const t = d.trace;
  for (const i of segmentEntries(d)) {
    if (i <= k) break;
    const a = t.action[i]!;
    const range: [number, number] = [t.addr[i]!, t.addr[i]! + t.size[i]!];
    // Undo: what was allocated/mapped at i was not reserved before it, and vice versa.
    ranges =
      a === Action.segment_alloc || a === Action.segment_map ? subtract(ranges, range) : union(ranges, range);
  }
  return ranges
    .sort((x, y) => x[0] - y[0])
    .map(([lo, hi]) => ({ address: lo, size: hi - lo, segment: segmentAt(s, d, lo) }));
}

/** Removes [lo, hi) from a set of disjoint ranges. */
function subtract(ranges: [number, number][], [lo, hi]: [number, number]): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of ranges) {
    if (b <= lo || a >= hi) out.push([a, b]);
    else {
      if (a < lo) out.push([a, lo]);
      if (b > hi) out.push([hi, b]);
    }
  }
  return out;
}

/** Adds [lo, hi), merging with ranges it overlaps (touching segments stay apart). */
function union(ranges: [number, number][], [lo, hi]: [number, number]): [number, number][] {
  const out: [number, number][] = [];
  let merged: [number, number] = [lo, hi];
  for (const [a, b] of ranges) {
    if (b <= merged[0] || a >= merged[1]) out.push([a, b]);
    else merged = [Math.min(a, merged[0]), Math.max(b, merged[1])];
  }
  out.push(merged);
  return out;
}

function segmentAt(s: Snapshot, d: DeviceModel, addr: number): number {
  for (const id of d.segmentIds) {
    const seg = s.tables.segments[id]!;
    if (addr >= seg.address && addr < seg.address + Math.max(seg.totalSize, 1)) return id;
  }
  return -1;
}

const cache = new WeakMap<DeviceModel, Int32Array>();

/** Indices of the segment events of a device, newest first (computed once per device). */
function segmentEntries(d: DeviceModel): Int32Array {
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
