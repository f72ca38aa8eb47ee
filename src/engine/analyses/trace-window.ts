import type { DeviceTrace } from '../model/device-trace.js';
import type { SegmentTables } from '../model/segments.js';
import { Action } from '../model/trace-columns.js';

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
  // Two plain objects per pool picked by a boolean: a keyed lookup per entry costs more than the undo.
  const curLarge = { ...end.large };
  const curSmall = { ...end.small };
  const out = { large: fresh(end.large), small: fresh(end.small) };
  const { action, size: sizes, addr } = trace;
  for (let i = trace.length - 1; i >= 0; i--) {
    const a = action[i]!;
    const size = sizes[i]!;
    const isSegment = a >= Action.segment_alloc && a <= Action.segment_unmap;
    if (!isSegment && a > Action.free_completed && a !== Action.free) continue;
    const small = isSegment ? poolAt(addr[i]!, size) === 'small' : size <= SMALL_REQUEST_LIMIT;
    if (small) undo(a, size, curSmall, out.small);
    else undo(a, size, curLarge, out.large);
  }
  return out;
}

function fresh(e: PoolEnd): WindowStats {
  return {
    peakRequestedBytes: e.requestedBytes,
    allocBytes: 0,
    freedBytes: 0,
    peakAllocations: e.allocations,
    allocCount: 0,
    freeCount: 0,
    peakReservedBytes: e.reservedBytes,
    segmentAllocBytes: 0,
    segmentFreedBytes: 0,
    peakSegments: e.segments,
    segmentAllocCount: 0,
    segmentFreeCount: 0,
  };
}

function undo(action: number, size: number, cur: PoolEnd, w: WindowStats): void {
  switch (action) {
    case Action.alloc:
      cur.requestedBytes -= size;
      cur.allocations--;
      w.allocBytes += size;
      w.allocCount++;
      break;
    case Action.free_requested:
    case Action.free: // the viewer's fold of free_requested + free_completed
      cur.requestedBytes += size;
      cur.allocations++;
      w.freedBytes += size;
      w.freeCount++;
      break;
    case Action.segment_alloc:
    case Action.segment_map:
      cur.reservedBytes -= size;
      w.segmentAllocBytes += size;
      if (action === Action.segment_alloc) {
        cur.segments--;
        w.segmentAllocCount++;
      }
      break;
    case Action.segment_free:
    case Action.segment_unmap:
      cur.reservedBytes += size;
      w.segmentFreedBytes += size;
      if (action === Action.segment_free) {
        cur.segments++;
        w.segmentFreeCount++;
      }
      break;
  }
  w.peakRequestedBytes = Math.max(w.peakRequestedBytes, cur.requestedBytes);
  w.peakAllocations = Math.max(w.peakAllocations, cur.allocations);
  w.peakReservedBytes = Math.max(w.peakReservedBytes, cur.reservedBytes);
  w.peakSegments = Math.max(w.peakSegments, cur.segments);
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
