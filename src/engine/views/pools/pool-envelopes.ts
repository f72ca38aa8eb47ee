import { stackAfter } from '../../derived/state/live-order.js';
import { describeSegment } from '../../derived/state/state-segments.js';
import { lowerBound } from '../../model/lower-bound.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import {
  columnSamples,
  emitStack,
  RunBuilder,
  type TimelineLod,
  type TimelineRequest,
} from '../timeline/timeline-lod.js';
import type { SegmentPieces } from './segment-timeline.js';

/**
 * memory_viz's "Allocated Memory (incl. Private Pools)": the caching allocator serves a request
 * only from free blocks of the same (pool, stream), so memory reserved by one such group is lost
 * to every other. Each group is drawn as an envelope whose height is its reserved bytes, with its
 * allocations' bytes at the bottom of it: the empty part of an envelope is memory that only that
 * pool and stream can reuse. Unlike memory_viz, every group gets one (the default pool's streams
 * too), and an envelope shrinks when its segments are released.
 */
export interface PoolGroup {
  /** segment_pool_id: (0, 0) is the default pool, anything else a private pool (CUDA graph, MemPool). */
  pool: readonly [number, number];
  stream: number;
}

export interface PoolEnvelopes {
  groups: PoolGroup[];
  /** Group of each segment piece (SegmentPieces ids), and of each allocation (-1: in no reserved piece). */
  pieceGroup: Int32Array;
  allocGroup: Int32Array;
  /** Allocations in no reserved piece when they were made (an inconsistent file): drawn in no envelope. */
  outside: number;
  /** Entries where pieces start or end, ascending, with the piece (ends as ~id). */
  pieceEventEntry: Int32Array;
  pieceEventId: Int32Array;
}

/**
 * The groups of a device: a piece of reserved memory takes its segment's pool and stream (the
 * dump segment holding it, else its segment events', as the pool state resolves them), and an
 * allocation the group of the piece that held its address when it was made.
 */
export function poolEnvelopes(s: Snapshot, d: DeviceModel, p: SegmentPieces): PoolEnvelopes {
  const keys = new Map<string, number>();
  const found: PoolGroup[] = [];
  const pieceGroup = new Int32Array(p.count);
  const dumpSegments = dumpSegmentFinder(s, d);
  for (let id = 0; id < p.count; id++) {
    const g = pieceOwner(s, d, p, id, dumpSegments);
    const key = `${g.pool[0]},${g.pool[1]},${g.stream}`;
    let code = keys.get(key);
    if (code === undefined) {
      code = found.length;
      keys.set(key, code);
      found.push(g);
    }
    pieceGroup[id] = code;
  }
  // Stable group codes in display order: the default pool first, then by pool and stream.
  const order = found.map((_, i) => i).sort((x, y) => compareGroups(found[x]!, found[y]!));
  const rank = new Int32Array(found.length);
  order.forEach((g, r) => {
    rank[g] = r;
  });
  for (let id = 0; id < p.count; id++) pieceGroup[id] = rank[pieceGroup[id]!]!;
  const events = pieceEvents(d, p);
  const { allocGroup, outside } = allocationGroups(d, p, pieceGroup, events);
  return {
    groups: order.map((g) => found[g]!),
    pieceGroup,
    allocGroup,
    outside,
    pieceEventEntry: events.entry,
    pieceEventId: events.id,
  };
}

function compareGroups(a: PoolGroup, b: PoolGroup): number {
  return a.pool[0] - b.pool[0] || a.pool[1] - b.pool[1] || a.stream - b.stream;
}

/** A piece as the pool state would describe the reserved range it belongs to. */
function pieceOwner(
  s: Snapshot,
  d: DeviceModel,
  p: SegmentPieces,
  id: number,
  dumpSegment: (address: number) => number,
): PoolGroup {
  const n = d.trace.length;
  const segment = p.end[id] === n ? dumpSegment(p.address[id]!) : -1;
  // The segment_alloc/map that began it, else the segment_free/unmap that ended it.
  const event = p.start[id]! >= 0 ? p.start[id]! : p.end[id]! < n ? p.end[id]! : -1;
  const stream = event >= 0 ? s.traceColumns.streams[d.trace.stream[event]!]! : 0;
  const seg = describeSegment(s, d, { address: p.address[id]!, size: p.size[id]!, segment, event, stream });
  return { pool: seg.poolId, stream: seg.stream };
}

/** The dump segment of this device holding an address (-1: none). */
function dumpSegmentFinder(s: Snapshot, d: DeviceModel): (address: number) => number {
  const ids = [...d.segmentIds].sort((x, y) => s.tables.segments[x]!.address - s.tables.segments[y]!.address);
  const starts = ids.map((id) => s.tables.segments[id]!.address);
  return (address) => {
    const i = lowerBound(starts, address + 1) - 1;
    if (i < 0) return -1;
    const seg = s.tables.segments[ids[i]!]!;
    return address < seg.address + seg.totalSize ? ids[i]! : -1;
  };
}

/** Piece starts (id) and ends (~id) by entry, ascending; pieces alive before the trace are not events. */
function pieceEvents(d: DeviceModel, p: SegmentPieces): { entry: Int32Array; id: Int32Array } {
  const rows: [number, number][] = [];
  for (let id = 0; id < p.count; id++) {
    if (p.start[id]! >= 0) rows.push([p.start[id]!, id]);
    if (p.end[id]! < d.trace.length) rows.push([p.end[id]!, ~id]);
  }
  rows.sort((x, y) => x[0] - y[0]);
  return { entry: Int32Array.from(rows, (r) => r[0]), id: Int32Array.from(rows, (r) => r[1]) };
}

/**
 * One pass over the trace with the live pieces sorted by address: each allocation is looked up
 * among them when it is made (pieces change only at segment events, so the list is short-lived
 * work; allocations cost a binary search each).
 */
function allocationGroups(
  d: DeviceModel,
  p: SegmentPieces,
  pieceGroup: Int32Array,
  events: { entry: Int32Array; id: Int32Array },
): { allocGroup: Int32Array; outside: number } {
  const a = d.allocations;
  const allocGroup = new Int32Array(a.count).fill(-1);
  const live: number[] = [];
  const liveStarts: number[] = [];
  const add = (id: number) => {
    const i = lowerBound(liveStarts, p.address[id]!);
    live.splice(i, 0, id);
    liveStarts.splice(i, 0, p.address[id]!);
  };
  const remove = (id: number) => {
    const i = live.indexOf(id);
    live.splice(i, 1);
    liveStarts.splice(i, 1);
  };
  const place = (alloc: number) => {
    const addr = a.addr[alloc]!;
    const i = lowerBound(liveStarts, addr + 1) - 1;
    const piece = live[i];
    if (piece !== undefined && addr < p.address[piece]! + p.size[piece]!)
      allocGroup[alloc] = pieceGroup[piece]!;
  };
  for (let id = 0; id < p.count; id++) if (p.start[id] === -1) add(id);
  for (let id = 0; id < a.count; id++) if (a.start[id] === -1) place(id);
  let e = 0;
  for (let i = 0; i < d.trace.length; i++) {
    for (; e < events.entry.length && events.entry[e] === i; e++) {
      const id = events.id[e]!;
      if (id >= 0) add(id);
      else remove(~id);
    }
    const alloc = a.ofEntry[i]!;
    if (alloc >= 0 && a.start[alloc] === i) place(alloc);
  }
  let outside = 0;
  for (let id = 0; id < a.count; id++) if (allocGroup[id]! < 0) outside++;
  return { allocGroup, outside };
}

/**
 * Reserved and allocation bytes of every group after an entry, stepped forward; with `stacks`,
 * each group's live allocations in stacking order too.
 */
export class GroupTotals {
  readonly reserved: Float64Array;
  readonly active: Float64Array;
  private at: number;
  private e: number;

  constructor(
    private readonly d: DeviceModel,
    private readonly p: SegmentPieces,
    private readonly env: PoolEnvelopes,
    after: number,
    private readonly stacks?: GroupStacks,
  ) {
    // As stateAfter: past the last entry is the state at dump.
    const from = Math.max(-1, Math.min(after, d.trace.length - 1));
    this.reserved = new Float64Array(env.groups.length);
    this.active = new Float64Array(env.groups.length);
    for (let id = 0; id < p.count; id++)
      if (p.start[id]! <= from && from < p.end[id]!) this.reserved[env.pieceGroup[id]!]! += p.size[id]!;
    for (const id of stackAfter(d, from)) {
      const g = env.allocGroup[id]!;
      if (g < 0) continue;
      this.active[g]! += d.allocations.size[id]!;
      stacks?.push(id);
    }
    this.at = from;
    this.e = lowerBound(env.pieceEventEntry, from + 1);
  }

  advanceTo(k: number): void {
    const { d, p, env, stacks } = this;
    const a = d.allocations;
    for (let i = this.at + 1; i <= Math.min(k, d.trace.length - 1); i++) {
      for (; this.e < env.pieceEventEntry.length && env.pieceEventEntry[this.e] === i; this.e++) {
        const id = env.pieceEventId[this.e]!;
        const piece = id >= 0 ? id : ~id;
        this.reserved[env.pieceGroup[piece]!]! += id >= 0 ? p.size[piece]! : -p.size[piece]!;
      }
      const alloc = a.ofEntry[i]!;
      if (alloc < 0) continue;
      const g = env.allocGroup[alloc]!;
      if (g < 0) continue;
      if (a.start[alloc] === i) {
        this.active[g]! += a.size[alloc]!;
        stacks?.push(alloc);
      }
      if (a.end[alloc] === i) {
        this.active[g]! -= a.size[alloc]!;
        stacks?.unlink(alloc);
      }
    }
    this.at = Math.max(this.at, k);
  }
}

/**
 * Each group's live allocations as a doubly linked list in stacking order (as the allocation
 * timeline's): one pair of link arrays for all, an allocation being in one group only.
 */
export class GroupStacks {
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly heads: Int32Array;
  private readonly tails: Int32Array;

  constructor(
    private readonly env: PoolEnvelopes,
    allocations: number,
  ) {
    this.next = new Int32Array(allocations);
    this.prev = new Int32Array(allocations);
    this.heads = new Int32Array(env.groups.length).fill(-1);
    this.tails = new Int32Array(env.groups.length).fill(-1);
  }

  push(id: number): void {
    const g = this.env.allocGroup[id]!;
    const tail = this.tails[g]!;
    this.prev[id] = tail;
    this.next[id] = -1;
    if (tail >= 0) this.next[tail] = id;
    else this.heads[g] = id;
    this.tails[g] = id;
  }

  unlink(id: number): void {
    const g = this.env.allocGroup[id]!;
    const p = this.prev[id]!;
    const n = this.next[id]!;
    if (p >= 0) this.next[p] = n;
    else this.heads[g] = n;
    if (n >= 0) this.prev[n] = p;
    else this.tails[g] = p;
  }

  /** Group g's list, bottom first, as emitStack walks it. */
  of(g: number): { head: number; next: Int32Array } {
    return { head: this.heads[g]!, next: this.next };
  }
}

/** Run code of the free part of group g's envelope (reserved by it, unallocated): -2 - g. */
export function freePartCode(group: number): number {
  return -2 - group;
}

/** The group whose envelope's free part a run code names, else -1 (an allocation, or merged ones). */
export function freePartGroup(code: number): number {
  return code <= -2 ? -2 - code : -1;
}

/**
 * The pools timeline's level of detail, in the allocation timeline's shape: each column shows
 * the state after its entry with the most reserved memory (then the most active), the groups
 * stacked in order, each one's allocations at its bottom as the allocation timeline stacks them
 * (one run each at least a pixel tall, merged runs below that), then the free part of its
 * envelope (run code freePartCode(g)); so the stack top is the reserved curve. `shown` leaves
 * groups out (a stream's view: pass that view as `d`, so the columns' totals are its own) and
 * gives merged runs the colour of a marked member, as the allocation timeline does.
 */
export function poolTimelineLod(
  d: DeviceModel,
  p: SegmentPieces,
  env: PoolEnvelopes,
  req: TimelineRequest,
  shown: PoolsShown = {},
): PoolTimelineLod {
  const columns = Math.max(1, Math.floor(req.columns));
  const t = d.totals;
  const reservedAt = (k: number): number => (k < 0 ? t.start.reserved : t.reserved[k]!);
  const activeAt = (k: number): number => (k < 0 ? t.start.active : t.active[k]!);
  const sample = columnSamples(d, req, columns, (k, best) => {
    const r = reservedAt(k) - reservedAt(best);
    return r > 0 || (r === 0 && activeAt(k) > activeAt(best));
  });
  const reserved = Float64Array.from(sample, reservedAt);
  const active = Float64Array.from(sample, activeAt);
  // The y axis first: merging needs the bytes one pixel row stands for.
  const yMax = reserved.reduce((m, r) => Math.max(m, r), Math.max(1, req.yTop ?? 0));
  const minBytes = yMax / Math.max(1, req.rows);
  const stacks = new GroupStacks(env, d.allocations.count);
  const totals = new GroupTotals(d, p, env, sample[0]!, stacks);
  const runs = new RunBuilder();
  const envelopeTop = new Float64Array(columns * env.groups.length);
  for (let c = 0; c < columns; c++) {
    totals.advanceTo(sample[c]!);
    runs.beginColumn(c);
    let y = 0;
    for (let g = 0; g < env.groups.length; g++) {
      if (shown.keep !== undefined && shown.keep[g] !== 1) {
        envelopeTop[g * columns + c] = Number.NaN;
        continue;
      }
      const top = y + totals.reserved[g]!;
      y = emitStack(stacks.of(g), d.allocations.size, y, minBytes, runs, shown.marked);
      if (top > y) runs.add(y, top, freePartCode(g), freePartCode(g), 1);
      y = Math.max(y, top);
      envelopeTop[g * columns + c] = y;
    }
    runs.endColumn();
  }
  return { columns, yMax, sample, active, reserved, ...runs.result(), envelopeTop };
}

/** The pools level of detail: also where each group's envelope ends in each column. */
export interface PoolTimelineLod extends TimelineLod {
  /** Top of group g's envelope in column c (bytes above the baseline), at g * columns + c; NaN: g left out. */
  envelopeTop: Float64Array;
}

/** What lies at `bytes` above the baseline after entry `k`: a group's allocation, or its envelope's free part. */
export interface PoolHit {
  group: number;
  /** The allocation there; -1 in the free part of the envelope. */
  alloc: number;
}

/** What the pools stack draws: groups left out (keep[g] !== 1; all when absent) and marked allocations (1 per id). */
export interface PoolsShown {
  keep?: Uint8Array;
  marked?: Uint8Array;
}

/** The groups of one CUDA stream (1 = kept), for PoolsShown.keep; undefined: every stream. */
export function groupsOnStream(
  env: PoolEnvelopes,
  stream: number | null | undefined,
): Uint8Array | undefined {
  if (stream === null || stream === undefined) return undefined;
  return Uint8Array.from(env.groups, (g) => (g.stream === stream ? 1 : 0));
}

/** The pools timeline's exact answer under a point, whatever its level of detail merged (null: above the stack). */
export function poolHitAt(
  d: DeviceModel,
  p: SegmentPieces,
  env: PoolEnvelopes,
  k: number,
  bytes: number,
  keep?: Uint8Array,
): PoolHit | null {
  let hit: PoolHit | null = null;
  walkPoolStack(d, p, env, k, keep, (group, alloc, y0, y1) => {
    if (bytes < y0 || bytes >= y1) return false;
    hit = { group, alloc };
    return true;
  });
  return hit;
}

/** Bytes below allocation `id` in the pools stack after entry `k` (-1: not drawn then). */
export function poolOffsetOf(
  d: DeviceModel,
  p: SegmentPieces,
  env: PoolEnvelopes,
  k: number,
  id: number,
  keep?: Uint8Array,
): number {
  let offset = -1;
  walkPoolStack(d, p, env, k, keep, (_, alloc, y0) => {
    if (alloc !== id) return false;
    offset = y0;
    return true;
  });
  return offset;
}

/**
 * The pools stack after entry `k`, bottom up, exactly (nothing merged): each kept group's live
 * allocations, then its envelope's free part (alloc -1), until `visit` says stop.
 */
function walkPoolStack(
  d: DeviceModel,
  p: SegmentPieces,
  env: PoolEnvelopes,
  k: number,
  keep: Uint8Array | undefined,
  visit: (group: number, alloc: number, y0: number, y1: number) => boolean,
): void {
  const stacks = new GroupStacks(env, d.allocations.count);
  const totals = new GroupTotals(d, p, env, k, stacks);
  const size = d.allocations.size;
  let y = 0;
  for (let g = 0; g < env.groups.length; g++) {
    if (keep !== undefined && keep[g] !== 1) continue;
    const top = y + totals.reserved[g]!;
    const { head, next } = stacks.of(g);
    for (let id = head; id !== -1; id = next[id]!) {
      if (visit(g, id, y, y + size[id]!)) return;
      y += size[id]!;
    }
    if (top > y && visit(g, -1, y, top)) return;
    y = Math.max(y, top);
  }
}
