import { describeSegment } from '../../derived/state/state-segments.js';
import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { stateAfter } from '../../model/state-at.js';
import { isWorkspaceSegment } from '../../model/workspace.js';

/**
 * The caching allocator's pool after any trace entry, as MindStudio Insight's "memory pool state"
 * shows it: each reserved range (segment) with the blocks live in it and the free space between
 * them. Block extents are the rounded block sizes where the dump has them (allocations still
 * alive at dump), else the requested sizes the trace records; the gaps therefore include the
 * rounding of blocks that were freed before the dump.
 */
export type PoolBlockState = 'allocated' | 'pending_free';

export interface PoolBlock {
  alloc: number;
  address: number;
  /** Requested bytes. */
  size: number;
  /** Rounded block bytes when the dump has this block, else null. */
  block_size: number | null;
  state: PoolBlockState;
}

export interface PoolSegment {
  address: number;
  size: number;
  /** Index into the dump's segments when the range is still reserved at dump, else -1. */
  segment: number;
  /** 'large' / 'small' and the segment's stream, when the dump has the segment. */
  pool: string | null;
  stream: number | null;
  /**
   * A private pool's id (CUDA graph capture, MemPool: `segment_pool_id` other than (0, 0)): the dump
   * segment's, else its segment event's `pool_id`; null for the default pool. Only allocations
   * of that pool can use its free space.
   */
  private_pool: [number, number] | null;
  /**
   * torch_npu's workspace segment (model/workspace.ts): held by the workspace allocator, so it has
   * no free space (gaps 0) and no tensor.
   */
  workspace: boolean;
  blocks: PoolBlock[];
  allocated_bytes: number;
  /** Segment bytes minus the live blocks' bytes, the number of free stretches and the largest. */
  gap_bytes: number;
  gap_count: number;
  max_gap: number;
}

export interface PoolStateReport {
  after_entry: number;
  segments: PoolSegment[];
  reserved_bytes: number;
  allocated_bytes: number;
  /** Live allocations whose address lies in no reserved range (e.g. allocated before a segment event the ring buffer dropped). */
  outside: PoolBlock[];
}

export function poolStateAfter(s: Snapshot, d: DeviceModel, k: number): PoolStateReport {
  const state = stateAfter(s, d, k);
  const segments: PoolSegment[] = state.reserved.map((r) => {
    const seg = r.segment >= 0 ? s.tables.segments[r.segment]! : undefined;
    const [x, y] = describeSegment(s, d, r).poolId;
    return {
      address: r.address,
      size: r.size,
      segment: r.segment,
      pool: seg?.pool ?? null,
      stream: r.stream,
      private_pool: x === 0 && y === 0 ? null : [x, y],
      workspace: seg !== undefined && isWorkspaceSegment(s.tables, seg),
      blocks: [],
      allocated_bytes: 0,
      gap_bytes: 0,
      gap_count: 0,
      max_gap: 0,
    };
  });
  const outside: PoolBlock[] = [];
  for (const id of state.allocations) {
    const block = blockOf(s, d, id, state.after);
    const seg = segments[rangeIndex(segments, block.address)];
    if (seg !== undefined && block.address < seg.address + seg.size) seg.blocks.push(block);
    else outside.push(block);
  }
  for (const seg of segments) if (!seg.workspace) measureGaps(seg);
  return {
    after_entry: state.after,
    segments,
    reserved_bytes: segments.reduce((n, x) => n + x.size, 0),
    allocated_bytes: segments.reduce((n, x) => n + x.allocated_bytes, 0),
    outside,
  };
}

function blockOf(s: Snapshot, d: DeviceModel, id: number, k: number): PoolBlock {
  const a = d.allocations;
  const b = a.block[id]!;
  const freed = a.freeRequested[id]!;
  const pending = freed === FREED_BEFORE_WINDOW || (freed >= 0 && freed <= k);
  return {
    alloc: id,
    address: a.addr[id]!,
    size: a.size[id]!,
    block_size: b >= 0 ? s.tables.blocks.size[b]! : null,
    state: pending ? 'pending_free' : 'allocated',
  };
}

/** Index of the last range starting at or below `addr` (ranges are address-ordered). */
function rangeIndex(segments: PoolSegment[], addr: number): number {
  let lo = 0;
  let hi = segments.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (segments[mid]!.address <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

function measureGaps(seg: PoolSegment): void {
  seg.blocks.sort((x, y) => x.address - y.address);
  let cursor = seg.address;
  const gap = (bytes: number): void => {
    if (bytes <= 0) return;
    seg.gap_count++;
    seg.max_gap = Math.max(seg.max_gap, bytes);
  };
  for (const b of seg.blocks) {
    gap(b.address - cursor);
    const extent = b.block_size ?? b.size;
    seg.allocated_bytes += extent;
    cursor = Math.max(cursor, b.address + extent);
  }
  gap(seg.address + seg.size - cursor);
  seg.gap_bytes = seg.size - seg.allocated_bytes;
}

/** How the pool state lists segments: by address (the allocator's order) or largest free gap first. */
export type SegmentOrder = 'address' | 'gap';

/**
 * The segments in the order asked, as a new array. Largest gap first answers "where could a big
 * request still fit, and which segment wastes most in one piece"; ties keep address order.
 */
export function orderSegments(segments: readonly PoolSegment[], order: SegmentOrder): PoolSegment[] {
  const out = [...segments];
  if (order === 'gap') out.sort((a, b) => b.max_gap - a.max_gap || a.address - b.address);
  return out;
}
