import type { DeviceTrace } from '../../model/device-trace.js';
import type { SegmentTables } from '../../model/segments.js';
import { Action } from '../../model/trace-columns.js';

/** PyTorch serves requests of at most 1 MiB from the small pool (kSmallSize). */
export const SMALL_REQUEST_LIMIT = 1024 * 1024;
/** Small-pool segments are always 2 MiB (kSmallBuffer). */
const SMALL_SEGMENT_SIZE = 2 * 1024 * 1024;

/** What the recorded window says about one pool: peaks and totals over the window. */
export interface WindowStats {
  peakRequestedBytes: number;
  allocBytes: number;
  freedBytes: number;
  peakAllocations: number;
  allocCount: number;
  freeCount: number;
  peakReservedBytes: number;
  segmentAllocBytes: number;
  segmentFreedBytes: number;
  peakSegments: number;
  segmentAllocCount: number;
  segmentFreeCount: number;
}

export interface PoolEnd {
  requestedBytes: number;
  allocations: number;
  reservedBytes: number;
  segments: number;
}

type Pool = 'large' | 'small';

/**
 * Per-pool peaks and totals over the window, walking backwards from the dump-time values. The
 * trace does not name the pool of an entry: requests go by PyTorch's size rule, segment events by
 * the dump-time segment at that address (else by size: small-pool segments are 2 MiB).
 */
export function windowStats(
  trace: DeviceTrace,
  tables: SegmentTables,
  end: Record<Pool, PoolEnd>,
): Record<Pool, WindowStats> {
  const poolAt = segmentPoolLookup(tables);
  // One typed array per pool picked by a boolean: a keyed lookup per entry costs more than the
  // undo, and object fields that outgrow small integers mid-walk deoptimize the loop.
  const large = fresh(end.large);
  const small = fresh(end.small);
  const { action, size: sizes, addr } = trace;
  for (let i = trace.length - 1; i >= 0; i--) {
    const a = action[i]!;
    // free_completed changes no figure here (requested bytes drop at free_requested)
    if (a === Action.free_completed || (a > Action.segment_unmap && a !== Action.free)) continue;
    const size = sizes[i]!;
    const isSegment = a >= Action.segment_alloc && a <= Action.segment_unmap;
    const isSmall = isSegment ? poolAt(addr[i]!, size) === 'small' : size <= SMALL_REQUEST_LIMIT;
    undo(a, size, isSmall ? small : large);
  }
  return { large: stats(large), small: stats(small) };
}

// The walk's state per pool: the current figures, then the window's.
const REQUESTED = 0;
const ALLOCATIONS = 1;
const RESERVED = 2;
const SEGMENTS = 3;
const PEAK_REQUESTED = 4;
const PEAK_ALLOCATIONS = 5;
const PEAK_RESERVED = 6;
const PEAK_SEGMENTS = 7;
const ALLOC_BYTES = 8;
const ALLOC_COUNT = 9;
const FREED_BYTES = 10;
const FREE_COUNT = 11;
const SEGMENT_ALLOC_BYTES = 12;
const SEGMENT_ALLOC_COUNT = 13;
const SEGMENT_FREED_BYTES = 14;
const SEGMENT_FREE_COUNT = 15;
// The lowest requested and reserved bytes the walk reached (below zero only in impossible files).
const MIN_REQUESTED = 16;
const MIN_RESERVED = 17;

function fresh(e: PoolEnd): Float64Array {
  const v = new Float64Array(18);
  v[MIN_REQUESTED] = e.requestedBytes;
  v[MIN_RESERVED] = e.reservedBytes;
  v[REQUESTED] = v[PEAK_REQUESTED] = e.requestedBytes;
  v[ALLOCATIONS] = v[PEAK_ALLOCATIONS] = e.allocations;
  v[RESERVED] = v[PEAK_RESERVED] = e.reservedBytes;
  v[SEGMENTS] = v[PEAK_SEGMENTS] = e.segments;
  return v;
}

function stats(v: Float64Array): WindowStats {
  // As the device's curves (RunningTotals.lift): a pool's curve never goes below zero, so its
  // peak is raised by what the trace took it below, and the pools' peaks still add up.
  return {
    peakRequestedBytes: v[PEAK_REQUESTED]! + Math.max(0, -v[MIN_REQUESTED]!),
    allocBytes: v[ALLOC_BYTES]!,
    freedBytes: v[FREED_BYTES]!,
    peakAllocations: v[PEAK_ALLOCATIONS]!,
    allocCount: v[ALLOC_COUNT]!,
    freeCount: v[FREE_COUNT]!,
    peakReservedBytes: v[PEAK_RESERVED]! + Math.max(0, -v[MIN_RESERVED]!),
    segmentAllocBytes: v[SEGMENT_ALLOC_BYTES]!,
    segmentFreedBytes: v[SEGMENT_FREED_BYTES]!,
    peakSegments: v[PEAK_SEGMENTS]!,
    segmentAllocCount: v[SEGMENT_ALLOC_COUNT]!,
    segmentFreeCount: v[SEGMENT_FREE_COUNT]!,
  };
}

/**
 * Steps one pool from after an entry to before it. Walking backwards, only undoing a free raises
 * the requested figures and only undoing a segment release raises the reserved ones, so the
 * peaks are compared there alone.
 */
function undo(action: number, size: number, v: Float64Array): void {
  switch (action) {
    case Action.alloc:
      v[REQUESTED]! -= size;
      if (v[REQUESTED]! < v[MIN_REQUESTED]!) v[MIN_REQUESTED] = v[REQUESTED]!;
      v[ALLOCATIONS]!--;
      v[ALLOC_BYTES]! += size;
      v[ALLOC_COUNT]!++;
      return;
    case Action.free_requested:
    case Action.free: // the viewer's fold of free_requested + free_completed
      v[REQUESTED]! += size;
      v[ALLOCATIONS]!++;
      v[FREED_BYTES]! += size;
      v[FREE_COUNT]!++;
      raise(v, REQUESTED, PEAK_REQUESTED);
      raise(v, ALLOCATIONS, PEAK_ALLOCATIONS);
      return;
    case Action.segment_alloc:
    case Action.segment_map:
      v[RESERVED]! -= size;
      if (v[RESERVED]! < v[MIN_RESERVED]!) v[MIN_RESERVED] = v[RESERVED]!;
      v[SEGMENT_ALLOC_BYTES]! += size;
      if (action === Action.segment_alloc) {
        v[SEGMENTS]!--;
        v[SEGMENT_ALLOC_COUNT]!++;
      }
      return;
    case Action.segment_free:
    case Action.segment_unmap:
      v[RESERVED]! += size;
      v[SEGMENT_FREED_BYTES]! += size;
      if (action === Action.segment_free) {
        v[SEGMENTS]!++;
        v[SEGMENT_FREE_COUNT]!++;
      }
      raise(v, RESERVED, PEAK_RESERVED);
      raise(v, SEGMENTS, PEAK_SEGMENTS);
  }
}

function raise(v: Float64Array, cur: number, peak: number): void {
  if (v[cur]! > v[peak]!) v[peak] = v[cur]!;
}

function segmentPoolLookup(tables: SegmentTables): (addr: number, size: number) => Pool {
  const sorted = [...tables.segments].sort((a, b) => a.address - b.address);
  return (addr, size) => {
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = sorted[mid]!;
      if (addr < s.address) hi = mid - 1;
      else if (addr >= s.address + Math.max(s.totalSize, 1)) lo = mid + 1;
      else return s.pool === 'small' ? 'small' : 'large';
    }
    return size === SMALL_SEGMENT_SIZE ? 'small' : 'large';
  };
}
