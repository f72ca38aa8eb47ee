import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import { BlockState } from '../../model/segments.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { NO_STACK } from '../../model/stack-table.js';
import { type ReservedRange, stateAfter } from '../../model/state-at.js';
import { Action } from '../../model/trace-columns.js';
import { SMALL_REQUEST_LIMIT } from './trace-window.js';

const MIN_BLOCK = 512;
const SMALL_SEGMENT_SIZE = 2 * 1024 * 1024;

/** One block of a rebuilt segment; `allocation` is -1 for the free (inactive) gaps. */
export interface BlockAt {
  address: number;
  size: number;
  requested: number;
  state: BlockState;
  stack: number;
  allocation: number;
  /** The rounded size is known (the block is alive at dump); else estimated by the split rule. */
  exactSize: boolean;
}

export interface SegmentAt {
  device: number;
  address: number;
  size: number;
  stream: number;
  pool: string;
  poolId: readonly [number, number];
  expandable: boolean;
  stack: number;
  blocks: BlockAt[];
}

export interface StateSegments {
  segments: SegmentAt[];
  /** Live allocations outside every reserved range (an inconsistent file): left out. */
  outside: number;
  estimatedBlocks: number;
}

/**
 * The allocator's state after entry k as segments and blocks, the way `segments` in a snapshot
 * dumped at that moment would list them: reserved ranges and live allocations from the model
 * (`stateAfter`), the free space between allocations as one inactive block per gap (the allocator
 * merges adjacent free blocks). What the trace cannot say is estimated and counted: the rounded
 * size of a block freed before the dump.
 */
export function stateSegments(s: Snapshot, d: DeviceModel, k: number): StateSegments {
  const state = stateAfter(s, d, k);
  const a = d.allocations;
  const ids = Array.from(state.allocations).sort((x, y) => a.addr[x]! - a.addr[y]!);
  const out: StateSegments = { segments: [], outside: 0, estimatedBlocks: 0 };
  const inactive = inactiveBlocks(s, d);
  let next = 0;
  for (const range of withExpandableTails(s, state.reserved)) {
    const seg = describeSegment(s, d, range);
    const hi = range.address + range.size;
    while (next < ids.length && a.addr[ids[next]!]! < range.address) {
      out.outside++;
      next++;
    }
    const inside: number[] = [];
    while (next < ids.length && a.addr[ids[next]!]! < hi) inside.push(ids[next++]!);
    seg.blocks = blocksOf({ s, d, k, out, inactive }, inside, seg);
    out.segments.push(seg);
  }
  out.outside += ids.length - next;
  return out;
}

interface Context {
  s: Snapshot;
  d: DeviceModel;
  k: number;
  out: StateSegments;
  /** Dump-time inactive blocks by address. */
  inactive: Map<number, number>;
}

function blocksOf(ctx: Context, ids: number[], seg: SegmentAt): BlockAt[] {
  const { s, d, k, out } = ctx;
  const a = d.allocations;
  const blocks: BlockAt[] = [];
  const end = seg.address + seg.size;
  let cursor = seg.address;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    const addr = a.addr[id]!;
    if (addr < cursor) {
      out.outside++;
      continue;
    }
    if (addr > cursor) blocks.push(freeBlock(ctx, cursor, addr - cursor));
    const limit = i + 1 < ids.length ? a.addr[ids[i + 1]!]! : end;
    const dumpBlock = a.block[id]!;
    const exactSize = dumpBlock >= 0;
    const size = exactSize ? s.tables.blocks.size[dumpBlock]! : estimatedSize(a.size[id]!, limit - addr, seg);
    if (!exactSize) out.estimatedBlocks++;
    blocks.push({
      address: addr,
      size: Math.min(size, limit - addr),
      requested: a.size[id]!,
      state: isFreeRequested(a.freeRequested[id]!, k) ? BlockState.pendingFree : BlockState.allocated,
      stack: a.stack[id]!,
      allocation: id,
      exactSize,
    });
    cursor = addr + blocks[blocks.length - 1]!.size;
  }
  if (cursor < end) blocks.push(freeBlock(ctx, cursor, end - cursor));
  return blocks;
}

function isFreeRequested(freeRequested: number, k: number): boolean {
  return freeRequested === FREED_BEFORE_WINDOW || (freeRequested >= 0 && freeRequested <= k);
}

/**
 * A free gap. When the dump has the same free block, its stale requested size and last stack come
 * with it, as PyTorch writes them; otherwise 0 and no stack.
 */
function freeBlock(ctx: Context, address: number, size: number): BlockAt {
  const b = ctx.inactive.get(address);
  const blocks = ctx.s.tables.blocks;
  const same = b !== undefined && blocks.size[b] === size;
  return {
    address,
    size,
    requested: same ? blocks.requestedSize[b]! : 0,
    state: BlockState.inactive,
    stack: same ? blocks.stack[b]! : NO_STACK,
    allocation: -1,
    exactSize: true,
  };
}

/**
 * An expandable segment is reported as one segment per contiguous mapped range, but the replay
 * keeps touching ranges apart (separate cudaMallocs can be adjacent): ranges that touch and belong
 * to an expandable segment, or were mapped into one and unmapped before the dump, are joined.
 */
function withExpandableTails(s: Snapshot, ranges: ReservedRange[]): ReservedRange[] {
  const expandable = (r: ReservedRange) => r.segment >= 0 && s.tables.segments[r.segment]!.expandable;
  // Never joins a regular cudaMalloc segment: only mapped pages of expandable ones.
  const regular = (x: ReservedRange) => x.segment >= 0 && !expandable(x);
  const out: ReservedRange[] = [];
  for (const r of ranges) {
    const prev = out[out.length - 1];
    const joins =
      prev !== undefined &&
      prev.address + prev.size === r.address &&
      (expandable(prev) || expandable(r)) &&
      !regular(prev) &&
      !regular(r);
    if (joins)
      out[out.length - 1] = {
        ...prev,
        size: prev.size + r.size,
        segment: prev.segment >= 0 ? prev.segment : r.segment,
      };
    else out.push(r);
  }
  return out;
}

function inactiveBlocks(s: Snapshot, d: DeviceModel): Map<number, number> {
  const { blocks, segments } = s.tables;
  const found = new Map<number, number>();
  for (const id of d.segmentIds) {
    const seg = segments[id]!;
    for (let b = seg.firstBlock; b < seg.firstBlock + seg.blockCount; b++)
      if (blocks.state[b] === BlockState.inactive) found.set(blocks.address[b]!, b);
  }
  return found;
}

/**
 * round_size (multiples of 512), then the allocator's split rule: a remainder too small to split
 * off (< 512 B in the small pool or an expandable segment, <= 1 MiB in the large pool) stays in
 * the block. roundup_power2_divisions is not modelled: such blocks may be larger in the original.
 */
function estimatedSize(requested: number, room: number, seg: SegmentAt): number {
  const rounded = Math.max(MIN_BLOCK, Math.ceil(requested / MIN_BLOCK) * MIN_BLOCK);
  const remainder = room - rounded;
  const splits =
    seg.pool === 'small' || seg.expandable ? remainder >= MIN_BLOCK : remainder > SMALL_REQUEST_LIMIT;
  return splits ? rounded : room;
}

/**
 * A reserved range still present at dump takes its segment's fields; one freed between k and the
 * dump takes stream, pool and stack from its segment events, its pool from its size. (The pools
 * timeline gives its pieces of reserved memory their pool and stream by the same rule.)
 */
export function describeSegment(s: Snapshot, d: DeviceModel, range: ReservedRange): SegmentAt {
  const { address, size, segment, event, stream } = range;
  if (segment >= 0) {
    const seg = s.tables.segments[segment]!;
    return {
      device: d.device,
      address,
      size,
      stream: seg.stream,
      pool: seg.pool,
      poolId: seg.poolId,
      expandable: seg.expandable,
      stack: seg.stack,
      blocks: [],
    };
  }
  const t = d.trace;
  const poolCode = event >= 0 && t.poolId ? t.poolId[event]! : -1;
  return {
    device: d.device,
    address,
    size,
    stream,
    pool: size === SMALL_SEGMENT_SIZE ? 'small' : 'large',
    poolId: poolCode >= 0 ? s.traceColumns.pools[poolCode]! : [0, 0],
    expandable: false,
    stack: event >= 0 && t.action[event] === Action.segment_alloc ? t.stack[event]! : NO_STACK,
    blocks: [],
  };
}
