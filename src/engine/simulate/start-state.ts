/**
 * The allocator's state when the recorded window opens (allocator-spec §9.11): the reserved
 * ranges rewound from the dump (model/state-at.ts), the blocks alive then at their recorded
 * addresses, and the gaps between them as free blocks (free neighbours are always merged, so
 * each gap is one block). Sizes of blocks freed inside the window are not in the file: they are
 * the rounded request, plus the remainder the allocator would not have split off.
 */
import { FREED_BEFORE_WINDOW } from '../model/allocations.js';
import { mainStream } from '../model/main-stream.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { reservedRangesAfter } from '../model/state-at.js';
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
  const ranges = startRanges(s, d, ctx, a.settings.expandable);
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

function startRanges(s: Snapshot, d: DeviceModel, ctx: SimContext, expandable: boolean): Range[] {
  return reservedRangesAfter(s, d, -1).map((r) => {
    const seg = r.segment >= 0 ? s.tables.segments[r.segment] : undefined;
    const small = seg !== undefined ? seg.pool === 'small' : r.size === SMALL_BUFFER;
    return {
      address: r.address,
      size: r.size,
      pool: (seg !== undefined ? ctx.privatePoolOf(seg.poolId) : 0) * 2 + (small ? 1 : 0),
      stream: seg !== undefined ? ctx.streamId(seg.stream) : UNKNOWN_STREAM,
      expandable: seg !== undefined ? seg.expandable : expandable,
      workspace: seg !== undefined && isWorkspaceSegment(s.tables, seg),
      live: [],
    };
  });
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
