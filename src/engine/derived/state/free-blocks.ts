import { BlockState } from '../../model/segments.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type AllocatorState, stateAfter, statesAfter } from '../../model/state-at.js';
import { Action } from '../../model/trace-columns.js';
import { SMALL_REQUEST_LIMIT } from './trace-window.js';

/**
 * Where reserved memory sits unused: the free blocks of every segment, grouped the way the
 * caching allocator can reuse them (a block only serves requests of its own pool, private pool
 * and stream). At dump time this is exact (the snapshot's blocks); after any trace entry it is
 * estimated from the model's state there (reserved ranges minus the live allocations).
 */
export interface FreeState {
  /** The trace entry after which this is the state; trace length − 1 (or −1) for the dump. */
  after: number;
  /** True when read from the dump's blocks; false when estimated from the trace. */
  exact: boolean;
  reserved_bytes: number;
  /** Bytes of blocks in use (allocated or pending free): block sizes, or rounded requests when estimated. */
  used_bytes: number;
  /** reserved − used: cached by PyTorch but holding no tensor. */
  free_bytes: number;
  free_blocks: number;
  /** Free blocks of segments that also hold live blocks: empty_cache cannot return them. */
  inactive_split_bytes: number;
  inactive_split_blocks: number;
  /** Free bytes of segments holding no live block: what empty_cache() would give back. */
  releasable_bytes: number;
  releasable_segments: number;
  groups: FreeGroup[];
  segments: SegmentGaps[];
}

/** Free blocks one allocator free list holds: one pool (large/small, default/private) and stream. */
export interface FreeGroup {
  pool: string;
  /** `segment_pool_id` of a private pool (CUDA graph, MemPool) as "(a, b)"; null: the default pool. */
  private_pool: string | null;
  /** Raw cudaStream_t value (0: the default stream). */
  stream: number;
  free_blocks: number;
  free_bytes: number;
  largest_free_block: number;
  largest_free_address: number;
}

/** One segment's gaps, as MindStudio Insight's segment details show them. */
export interface SegmentGaps {
  address: number;
  size: number;
  pool: string;
  private_pool: string | null;
  stream: number;
  expandable: boolean;
  used_bytes: number;
  gap_bytes: number;
  gap_count: number;
  max_gap: number;
}

/** The state after entry `k`: exact from the dump when nothing changed memory after k, else estimated. */
export function freeStateAfter(s: Snapshot, d: DeviceModel, k: number): FreeState {
  return memoryChangesAfter(d, k) ? estimatedFreeState(s, d, k) : dumpFreeState(s, d);
}

/** True when an entry after `k` allocated, freed or (un)mapped memory. */
export function memoryChangesAfter(d: DeviceModel, k: number): boolean {
  for (let i = Math.max(0, k + 1); i < d.trace.length; i++)
    if (d.trace.action[i]! <= Action.segment_unmap) return true;
  return false;
}

/** Exact: the snapshot's own segments and blocks. */
export function dumpFreeState(s: Snapshot, d: DeviceModel): FreeState {
  const b = s.tables.blocks;
  const acc = new Accumulator(d.trace.length - 1, true);
  for (const id of d.segmentIds) {
    const seg = s.tables.segments[id]!;
    const gaps = acc.segment(
      seg.address,
      seg.totalSize,
      seg.pool,
      poolName(seg.poolId),
      seg.stream,
      seg.expandable,
    );
    acc.setSplit(gaps, !seg.expandable && seg.blockCount > 1);
    for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
      const st = b.state[k];
      if (st === BlockState.inactive) acc.gap(gaps, b.address[k]!, b.size[k]!);
      else if (st === BlockState.allocated || st === BlockState.pendingFree) gaps.used_bytes += b.size[k]!;
    }
  }
  return acc.finish();
}

/**
 * Estimated: the reserved ranges after entry `k` minus the allocations alive then. An allocation
 * still alive at dump occupies its block's real size; one freed in the window occupies its
 * request rounded to 512 bytes (the unsplit tail the allocator may have kept with it is counted
 * as free, so gaps can be overstated by up to 1 MiB per allocation).
 */
export function estimatedFreeState(s: Snapshot, d: DeviceModel, k: number): FreeState {
  return freeStateOf(s, d, stateAfter(s, d, k));
}

/** `estimatedFreeState` after each of many entries (ascending), their live sets found in one pass. */
export function estimatedFreeStates(s: Snapshot, d: DeviceModel, ks: readonly number[]): FreeState[] {
  return statesAfter(s, d, ks).map((state) => freeStateOf(s, d, state));
}

function freeStateOf(s: Snapshot, d: DeviceModel, state: AllocatorState): FreeState {
  const { lo, hi, req } = liveExtents(s, d, state.allocations);
  const acc = new Accumulator(state.after, false);
  let j = 0;
  let reach = 0;
  for (const r of state.reserved) {
    const end = r.address + r.size;
    while (j < lo.length && lo[j]! < r.address) j++;
    const first = j;
    while (j < lo.length && lo[j]! < end) j++;
    const seg = r.segment >= 0 ? s.tables.segments[r.segment]! : undefined;
    const pool = seg?.pool ?? guessPool(r.size, req.subarray(first, j));
    const stream = r.stream;
    const gaps = acc.segment(
      r.address,
      r.size,
      pool,
      seg ? poolName(seg.poolId) : null,
      stream,
      seg?.expandable ?? false,
    );
    // An allocation can span two touching ranges (pages of an expandable segment mapped apart).
    const carried = Math.max(0, Math.min(reach, end) - r.address);
    gaps.used_bytes += carried;
    let cursor = r.address + carried;
    for (let i = first; i < j; i++) {
      if (lo[i]! > cursor) acc.gap(gaps, cursor, lo[i]! - cursor);
      const top = Math.min(hi[i]!, end);
      gaps.used_bytes += Math.max(0, top - Math.max(cursor, lo[i]!));
      cursor = Math.max(cursor, top);
      reach = Math.max(reach, hi[i]!);
    }
    if (end > cursor) acc.gap(gaps, cursor, end - cursor);
  }
  return acc.finish();
}

/** [lo, hi) and requested bytes of every live allocation, sorted by address. */
function liveExtents(
  s: Snapshot,
  d: DeviceModel,
  ids: Int32Array,
): { lo: Float64Array; hi: Float64Array; req: Float64Array } {
  const a = d.allocations;
  const order = Array.from(ids).sort((x, y) => a.addr[x]! - a.addr[y]!);
  const lo = new Float64Array(order.length);
  const hi = new Float64Array(order.length);
  const req = new Float64Array(order.length);
  const occupied = occupiedBytes(s, d);
  order.forEach((id, i) => {
    req[i] = a.size[id]!;
    lo[i] = a.addr[id]!;
    hi[i] = lo[i]! + occupied(id);
  });
  return { lo, hi, req };
}

/** Bytes an allocation occupies in the estimate: its dump block's size, else its request rounded to 512. */
export function occupiedBytes(s: Snapshot, d: DeviceModel): (id: number) => number {
  const { block, size } = d.allocations;
  const blockSize = s.tables.blocks.size;
  return (id) => {
    const b = block[id]!;
    return b >= 0 ? blockSize[b]! : roundRequest(size[id]!);
  };
}

/** The allocator's 512-byte rounding (round_size without power-of-two divisions). */
function roundRequest(bytes: number): number {
  return Math.max(512, Math.ceil(bytes / 512) * 512);
}

/** A range gone by dump time: its requests say the pool (≤ 1 MiB is small), else its size (small segments are 2 MiB). */
function guessPool(size: number, requests: Float64Array): string {
  if (requests.length > 0) return requests[0]! <= SMALL_REQUEST_LIMIT ? 'small' : 'large';
  return size === 2 * SMALL_REQUEST_LIMIT ? 'small' : 'large';
}

export function poolName(id: readonly [number, number]): string | null {
  return id[0] === 0 && id[1] === 0 ? null : `(${id[0]}, ${id[1]})`;
}

class Accumulator {
  private readonly state: FreeState;
  private readonly byList = new Map<string, FreeGroup>();
  private current: FreeGroup | undefined;
  /** Segments whose split state the dump states (more than one block); others: holding a live block. */
  private readonly split = new Map<SegmentGaps, boolean>();

  constructor(after: number, exact: boolean) {
    this.state = {
      after,
      exact,
      reserved_bytes: 0,
      used_bytes: 0,
      free_bytes: 0,
      free_blocks: 0,
      inactive_split_bytes: 0,
      inactive_split_blocks: 0,
      releasable_bytes: 0,
      releasable_segments: 0,
      groups: [],
      segments: [],
    };
  }

  segment(
    address: number,
    size: number,
    pool: string,
    privatePool: string | null,
    stream: number,
    expandable: boolean,
  ): SegmentGaps {
    const key = `${pool}|${privatePool}|${stream}`;
    let g = this.byList.get(key);
    if (g === undefined) {
      g = {
        pool,
        private_pool: privatePool,
        stream,
        free_blocks: 0,
        free_bytes: 0,
        largest_free_block: 0,
        largest_free_address: 0,
      };
      this.byList.set(key, g);
    }
    this.current = g;
    const gaps: SegmentGaps = {
      address,
      size,
      pool,
      private_pool: privatePool,
      stream,
      expandable,
      used_bytes: 0,
      gap_bytes: 0,
      gap_count: 0,
      max_gap: 0,
    };
    this.state.segments.push(gaps);
    this.state.reserved_bytes += size;
    return gaps;
  }

  setSplit(seg: SegmentGaps, split: boolean): void {
    this.split.set(seg, split);
  }

  gap(seg: SegmentGaps, address: number, size: number): void {
    const g = this.current!;
    seg.gap_bytes += size;
    seg.gap_count++;
    seg.max_gap = Math.max(seg.max_gap, size);
    g.free_blocks++;
    g.free_bytes += size;
    if (size > g.largest_free_block) {
      g.largest_free_block = size;
      g.largest_free_address = address;
    }
  }

  finish(): FreeState {
    const st = this.state;
    for (const seg of st.segments) {
      st.used_bytes += seg.used_bytes;
      st.free_bytes += seg.gap_bytes;
      st.free_blocks += seg.gap_count;
      // The corpus definition: inactive blocks of non-expandable segments split into several blocks.
      if (this.split.get(seg) ?? (!seg.expandable && seg.used_bytes > 0)) {
        st.inactive_split_bytes += seg.gap_bytes;
        st.inactive_split_blocks += seg.gap_count;
      }
      if (seg.used_bytes === 0 && !seg.expandable) {
        st.releasable_bytes += seg.gap_bytes;
        st.releasable_segments++;
      }
    }
    st.groups = [...this.byList.values()]
      .filter((g) => g.free_blocks > 0)
      .sort((x, y) => y.largest_free_block - x.largest_free_block || y.free_bytes - x.free_bytes);
    return st;
  }
}
