import { BlockState, type SegmentTables } from '../../model/segments.js';

/** Exact dump-time figures of one device, straight from `segments` (corpus/README definitions). */
export interface DumpState {
  segments: number;
  expandableSegments: number;
  blocks: number;
  pools: Record<string, { segments: number; reservedBytes: number }>;
  reservedBytes: number;
  allocatedBytes: number;
  activeBytes: number;
  requestedBytes: number;
  /** Inactive blocks in non-expandable segments that have more than one block: cached but not releasable. */
  inactiveSplitBytes: number;
  inactiveSplitBlocks: number;
  largestInactiveBlock: number;
  /** torch_npu's workspace blocks: reserved, held by the workspace allocator, no tensor's. */
  workspaceBytes: number;
  perPool: Record<string, PoolState>;
  privatePools: string[];
}

export interface PoolState {
  allocatedBytes: number;
  activeBytes: number;
  /** Requested bytes of active blocks (allocated + pending free). */
  requestedBytes: number;
  /** Requested bytes of active_allocated blocks only: what the trace's allocated curve ends at. */
  allocatedRequestedBytes: number;
  reservedBytes: number;
  inactiveSplitBytes: number;
  allocations: number;
  activeAllocations: number;
  segments: number;
  inactiveSplitBlocks: number;
}

export function dumpState(tables: SegmentTables, segmentIds: number[]): DumpState {
  const s: DumpState = {
    segments: 0,
    expandableSegments: 0,
    blocks: 0,
    pools: {},
    reservedBytes: 0,
    allocatedBytes: 0,
    activeBytes: 0,
    requestedBytes: 0,
    inactiveSplitBytes: 0,
    inactiveSplitBlocks: 0,
    largestInactiveBlock: 0,
    workspaceBytes: 0,
    perPool: {},
    privatePools: [],
  };
  const privatePools = new Set<string>();
  for (const id of segmentIds) {
    const seg = tables.segments[id]!;
    const pool = (s.pools[seg.pool] ??= { segments: 0, reservedBytes: 0 });
    pool.segments++;
    pool.reservedBytes += seg.totalSize;
    s.segments++;
    if (seg.expandable) s.expandableSegments++;
    if (seg.poolId[0] !== 0 || seg.poolId[1] !== 0) privatePools.add(`(${seg.poolId[0]}, ${seg.poolId[1]})`);
    s.reservedBytes += seg.totalSize;
    addBlocks(s, tables, id, (s.perPool[seg.pool] ??= emptyPool()));
  }
  s.privatePools = [...privatePools];
  return s;
}

function emptyPool(): PoolState {
  return {
    allocatedBytes: 0,
    activeBytes: 0,
    requestedBytes: 0,
    allocatedRequestedBytes: 0,
    reservedBytes: 0,
    inactiveSplitBytes: 0,
    allocations: 0,
    activeAllocations: 0,
    segments: 0,
    inactiveSplitBlocks: 0,
  };
}

function addBlocks(s: DumpState, tables: SegmentTables, id: number, pool: PoolState): void {
  const seg = tables.segments[id]!;
  const b = tables.blocks;
  pool.segments++;
  pool.reservedBytes += seg.totalSize;
  const splittable = !seg.expandable && seg.blockCount > 1;
  for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
    s.blocks++;
    const size = b.size[k]!;
    const state = b.state[k];
    if (state === BlockState.allocated || state === BlockState.pendingFree) {
      s.activeBytes += size;
      s.requestedBytes += b.requestedSize[k]!;
      pool.activeBytes += size;
      pool.requestedBytes += b.requestedSize[k]!;
      pool.activeAllocations++;
      if (state === BlockState.allocated) {
        s.allocatedBytes += size;
        pool.allocatedBytes += size;
        pool.allocatedRequestedBytes += b.requestedSize[k]!;
        pool.allocations++;
      }
    } else if (state === BlockState.workspace) {
      s.workspaceBytes += size;
    } else if (state === BlockState.inactive) {
      s.largestInactiveBlock = Math.max(s.largestInactiveBlock, size);
      if (splittable) {
        s.inactiveSplitBytes += size;
        s.inactiveSplitBlocks++;
        pool.inactiveSplitBytes += size;
        pool.inactiveSplitBlocks++;
      }
    }
  }
}
