/**
 * The allocator's state when the recorded window opens (allocator-spec §9.11): the reserved
 * ranges rewound from the dump (model/state-at.ts), the blocks alive then at their recorded
 * addresses, and the gaps between them as free blocks (free neighbours are always merged, so
 * each gap is one block). Sizes of blocks freed inside the window are not in the file: they are
 * the rounded request, plus the remainder the allocator would not have split off.
 */
import { FREED_BEFORE_WINDOW } from '../model/allocations.js';
import { mainStream } from '../model/main-stream.js';
import type { Segment } from '../model/segments.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { type ReservedRange, reservedRangesAfter } from '../model/state-at.js';
import { Action } from '../model/trace-columns.js';
import { isWorkspaceSegment } from '../model/workspace.js';
import type { SimAllocator } from './allocator.js';
import { ALLOCATED, FREE, NONE, PENDING, UNMAPPED } from './block-store.js';
import type { SimContext } from './context.js';
import { pageSize } from './expandable.js';
import { MIN_BLOCK, roundSize, SMALL_BUFFER, SMALL_SIZE } from './rounding.js';

const UNKNOWN_STREAM = -1;

interface Range {
  address: number;
  size: number;
  pool: number;
  stream: number;
  expandable: boolean;
  /** torch_npu's workspace segment (model/workspace.ts): held, never the caching allocator's to hand out. */
  workspace: boolean;
  /** Allocation ids alive at the start inside this range, by address. */
  live: number[];
}

/** Builds the start state into `a`; returns each allocation's block (NONE if not alive at start). */
export function loadStartState(a: SimAllocator, s: Snapshot, d: DeviceModel, ctx: SimContext): Int32Array {
  const blockOf = new Int32Array(d.allocations.count).fill(NONE);
  const ranges = startRanges(s, d, ctx, pageSize(a, 0));
  placeLive(d, ranges);
  // A range that held nothing alive and is gone at the dump: its stream is unknown, and the
  // device's main stream is the one that would have reused it (never "stream 0": torch_npu's
  // streams are pointers).
  for (const r of ranges) if (r.stream === UNKNOWN_STREAM) r.stream = ctx.streamId(mainStream(s, d));
  for (const r of ranges) {
    if (r.expandable) continue;
    const seg = a.segments.add(r.address, r.size, r.pool, r.stream, false, -1);
    fillRange(a, s, d, r, seg, blockOf);
    a.stats.reserved += r.size;
  }
  loadExpandable(
    a,
    s,
    d,
    ranges.filter((r) => r.expandable),
    blockOf,
  );
  a.stats.settle();
  return blockOf;
}

function startRanges(s: Snapshot, d: DeviceModel, ctx: SimContext, largePage: number): Range[] {
  const reserved = reservedRangesAfter(s, d, -1);
  const owners = reserved.filter((r) => r.segment >= 0 && s.tables.segments[r.segment]!.expandable);
  return reserved.map((r) => {
    const seg = r.segment >= 0 ? s.tables.segments[r.segment] : undefined;
    if (seg !== undefined) {
      return range(r, {
        pool: poolOf(ctx, seg),
        stream: ctx.streamId(seg.stream),
        expandable: seg.expandable,
        workspace: isWorkspaceSegment(s.tables, seg),
      });
    }
    if (!releasedByUnmap(d, r.event)) {
      // A cudaMalloc'd segment freed in the window: small-pool segments are exactly kSmallBuffer.
      const pool = r.size === SMALL_BUFFER ? 1 : 0;
      return range(r, { pool, stream: UNKNOWN_STREAM, expandable: false, workspace: false });
    }
    return range(r, { ...unmappedPool(s, ctx, r, owners, largePage), expandable: true, workspace: false });
  });
}

/** The simulator's pool index: two per private pool (0: default), large then small. */
function poolOf(ctx: SimContext, seg: Segment): number {
  return ctx.privatePoolOf(seg.poolId) * 2 + (seg.pool === 'small' ? 1 : 0);
}

function range(r: ReservedRange, rest: Omit<Range, 'address' | 'size' | 'live'>): Range {
  return { address: r.address, size: r.size, ...rest, live: [] };
}

/** The event that gave a range back was a segment_unmap (pages of an expandable segment), not a cudaFree. */
function releasedByUnmap(d: DeviceModel, event: number): boolean {
  const action = d.trace.action[event];
  return action === Action.segment_unmap || action === Action.segment_map;
}

/**
 * Pages unmapped in the window belong to an expandable segment that may still be mapped
 * elsewhere at the dump, where it has its pool. PyTorch reserves each segment's own address
 * range of 1.125 × the device's memory and maps pages from its low end, and traces the unmap on
 * the segment's stream, so the owner is the nearest dump-time expandable range of the same
 * stream. Without one, the page sizes decide: a range that is no whole number of large pages
 * (20 MiB or large_segment_size) is small-pool pages (2 MiB). Source: c10/cuda/
 * CUDACachingAllocator.cpp (pytorch/pytorch @ eb42ad6eca0ce61e7c581212b4bf32f991425571, same
 * code in 2026 main): `ExpandableSegment`'s constructor (`max_handles_ =
 * numSegments(prop.totalGlobalMem + prop.totalGlobalMem / 8)`, `cuMemAddressReserve_(&ptr_,
 * segment_size_ * max_handles_, ...)`), `unmap_block` (`record_trace(TraceEntry::SEGMENT_UNMAP,
 * ..., block->stream, ...)`).
 */
function unmappedPool(
  s: Snapshot,
  ctx: SimContext,
  r: ReservedRange,
  owners: readonly ReservedRange[],
  largePage: number,
): { pool: number; stream: number } {
  let best: ReservedRange | undefined;
  let bestGap = Number.POSITIVE_INFINITY;
  for (const o of owners) {
    if (s.tables.segments[o.segment]!.stream !== r.stream) continue;
    const gap = Math.max(o.address - (r.address + r.size), r.address - (o.address + o.size), 0);
    if (gap < bestGap) {
      best = o;
      bestGap = gap;
    }
  }
  const stream = ctx.streamId(r.stream);
  if (best === undefined) return { pool: r.size % largePage === 0 ? 0 : 1, stream };
  const seg = s.tables.segments[best.segment]!;
  return { pool: poolOf(ctx, seg), stream };
}

/** Allocation ids alive before the first entry, each put in the range that holds its address. */
function placeLive(d: DeviceModel, ranges: Range[]): void {
  const al = d.allocations;
  const sorted = [...ranges].sort((x, y) => x.address - y.address);
  const starts = sorted.map((r) => r.address);
  for (let id = 0; id < al.count; id++) {
    if (al.start[id] !== -1) continue;
    const addr = al.addr[id]!;
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! <= addr) lo = mid + 1;
      else hi = mid;
    }
    const r = sorted[lo - 1];
    if (r !== undefined && addr < r.address + r.size) {
      r.live.push(id);
      // The stream of a segment freed before the dump is that of the blocks it held.
      if (r.live.length === 1 && r.stream === UNKNOWN_STREAM) r.stream = al.stream[id]!;
    }
  }
  for (const r of ranges) r.live.sort((x, y) => al.addr[x]! - al.addr[y]!);
}

/** Size of a block alive at the start: from the dump, else inferred from the request. */
function blockSize(
  a: SimAllocator,
  s: Snapshot,
  d: DeviceModel,
  id: number,
  room: number,
  small: boolean,
): number {
  const k = d.allocations.block[id]!;
  if (k >= 0) return Math.min(s.tables.blocks.size[k]!, room);
  const size = Math.min(roundSize(d.allocations.size[id]!, a.settings), room);
  const rest = room - size;
  const split =
    small || a.settings.expandable ? rest >= MIN_BLOCK : size < a.settings.maxSplitSize && rest > SMALL_SIZE;
  return split ? size : room;
}

/**
 * Blocks of one classic range: live ones at their addresses, free gaps between them. A workspace
 * range is one block that stays taken (no tensor's, so in reserved and not in allocated).
 */
function fillRange(
  a: SimAllocator,
  s: Snapshot,
  d: DeviceModel,
  r: Range,
  seg: number,
  blockOf: Int32Array,
): void {
  const end = r.address + r.size;
  let cursor = r.address;
  let prev = NONE;
  const link = (b: number): void => {
    a.blocks.prev[b] = prev;
    if (prev !== NONE) a.blocks.next[prev] = b;
    else a.segments.head[seg] = b;
    prev = b;
  };
  const gap = (to: number): void => {
    if (to <= cursor) return;
    const b = a.blocks.newBlock(cursor, to - cursor, seg, r.pool, r.stream, r.workspace ? ALLOCATED : FREE);
    link(b);
    cursor = to;
  };
  r.live.forEach((id, k) => {
    const addr = d.allocations.addr[id]!;
    if (addr < cursor) return; // overlapping records (an inconsistent file): keep the first
    gap(addr);
    const next = k + 1 < r.live.length ? d.allocations.addr[r.live[k + 1]!]! : end;
    const size = blockSize(a, s, d, id, next - addr, (r.pool & 1) === 1);
    const b = a.blocks.newBlock(addr, size, seg, r.pool, r.stream, ALLOCATED);
    link(b);
    liveBlock(a, d, id, b);
    blockOf[id] = b;
    cursor = addr + size;
  });
  gap(end);
  // Link first, then index: insertFree needs final sizes, and frees go in once linked.
  for (let b = a.segments.head[seg]!; b !== NONE; b = a.blocks.next[b]!) {
    if (a.blocks.state[b] === FREE) a.insertFree(b);
  }
}

function liveBlock(a: SimAllocator, d: DeviceModel, id: number, b: number): void {
  const al = d.allocations;
  a.blocks.requested[b] = al.size[id]!;
  a.blocks.owner[b] = id;
  const size = a.blocks.size[b]!;
  if (al.freeRequested[id] === FREED_BEFORE_WINDOW) {
    a.blocks.state[b] = PENDING;
    a.pending.add(b);
    a.stats.active += size;
  } else {
    a.stats.onAlloc(size, al.size[id]!);
  }
}

/**
 * Expandable ranges of one pool and stream become one segment: mapped ranges with their
 * blocks, unmapped holes between them and after the last one.
 */
function loadExpandable(
  a: SimAllocator,
  s: Snapshot,
  d: DeviceModel,
  ranges: Range[],
  blockOf: Int32Array,
): void {
  const groups = new Map<number, Range[]>();
  for (const r of ranges) {
    const key = r.pool * 65536 + r.stream;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, group] of groups) {
    group.sort((x, y) => x.address - y.address);
    const first = group[0]!;
    const page = pageSize(a, first.pool);
    const last = group[group.length - 1]!;
    const mapped = last.address + last.size - first.address;
    const memory = Number.isFinite(a.capacity) ? a.capacity : 2 ** 40;
    const vaSize = Math.max(Math.ceil((memory * 1.125) / page) * page, Math.ceil(mapped / page) * page);
    const seg = a.segments.add(first.address, vaSize, first.pool, first.stream, true, -1);
    a.expandableOf.set(key, [seg]);
    // Build the classic way range by range, then splice the ranges into one chain with holes.
    let tail = NONE;
    let cursor = first.address;
    const hole = (to: number): void => {
      if (to <= cursor) return;
      const u = a.blocks.newBlock(cursor, to - cursor, seg, first.pool, first.stream, UNMAPPED);
      append(u);
    };
    const append = (b: number): void => {
      a.blocks.prev[b] = tail;
      if (tail !== NONE) a.blocks.next[tail] = b;
      else a.segments.head[seg] = b;
      if (tail !== NONE && a.blocks.state[tail] === FREE && a.blocks.state[b] === FREE)
        mergeFree(a, seg, tail, b);
      tail = b;
    };
    for (const r of group) {
      hole(r.address);
      const tmp = a.segments.add(r.address, r.size, r.pool, r.stream, true, -1);
      fillRange(a, s, d, r, tmp, blockOf);
      const head = a.segments.head[tmp]!;
      a.segments.drop(tmp);
      for (let b = head; b !== NONE; ) {
        const next = a.blocks.next[b]!;
        a.blocks.segment[b] = seg;
        append(b);
        b = next;
      }
      a.blocks.next[tail] = NONE;
      a.stats.reserved += r.size;
      cursor = r.address + r.size;
    }
    hole(first.address + vaSize);
  }
}

/**
 * Ranges that touch are one mapped run of one segment (pages unmapped after this moment beside
 * pages still mapped at the dump: `snapshot()` reports "one segment for each contiguous mapped
 * range"), and free blocks either side of the seam are one block: `free_block` merges a freed
 * block with its free neighbours (`merge_candidates = {block->prev, block->next}`, each through
 * `try_merge_blocks`), and `unmap_block` keeps the part of a free block before its first whole page
 * free and mapped, beside the pages it unmaps (c10/cuda/CUDACachingAllocator.cpp,
 * pytorch/pytorch @ eb42ad6eca0ce61e7c581212b4bf32f991425571, same code in 2026 main).
 */
function mergeFree(a: SimAllocator, seg: number, low: number, high: number): void {
  a.removeFree(low);
  a.removeFree(high);
  a.blocks.absorb(high, low);
  if (a.segments.head[seg] === low) a.segments.head[seg] = high;
  a.insertFree(high);
}
