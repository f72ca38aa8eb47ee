import { formatBytes, formatCount, plural } from '../../base/format.js';
import {
  dumpFreeState,
  estimatedFreeStates,
  type FreeGroup,
  type FreeState,
  freeStateAfter,
  type SegmentGaps,
} from '../../derived/state/free-blocks.js';
import { SMALL_REQUEST_LIMIT } from '../../derived/state/trace-window.js';
import { lowerBound } from '../../model/lower-bound.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { segmentEntries } from '../../model/state-at.js';
import { Action } from '../../model/trace-columns.js';
import { type FragSweep, fragSweep } from './frag-sweep.js';

export interface FragOptions {
  /** Also report the state after this trace entry. */
  at?: number;
  /** Worst segments to list (default 10). */
  top?: number;
  /** segment_allocs whose free blocks are estimated in detail (default 100; the rest get totals only). */
  detailed?: number;
  /** Points of the reserved − allocated curve (default 24). */
  samples?: number;
}

/** Fragmentation at one moment: the free blocks, the worst segments, and what they mean. */
export interface FragState extends Omit<FreeState, 'after' | 'groups' | 'segments'> {
  after_entry: number;
  largest_free_block: number;
  /** Per free list (pool, private pool, stream), largest free block first. */
  free_lists: FreeGroup[];
  worst_segments: SegmentGaps[];
  explanation: string[];
}

/** The reserved and allocated curves at one entry (requested bytes, as the trace records them). */
export interface CurvePoint {
  after_entry: number;
  time_us: number | null;
  reserved_bytes: number;
  allocated_bytes: number;
  active_bytes: number;
  reserved_minus_allocated_bytes: number;
  /** Estimated like `detail` (see frag-sweep.ts): free parts of ranges that hold a tensor. */
  inactive_split_bytes: number;
  /** Ranges holding no tensor: what empty_cache() would return. */
  releasable_bytes: number;
}

/** The moment before a `segment_alloc`: what was cached but could not serve the request. */
export interface SegmentAllocMoment {
  entry: number;
  time_us: number | null;
  segment_bytes: number;
  stream: number;
  pool: string;
  /** The allocation the new segment was made for (the next alloc inside it), if recorded. */
  request_bytes: number | null;
  reserved_before_bytes: number;
  allocated_before_bytes: number;
  reserved_minus_allocated_before_bytes: number;
  /** Non-releasable and releasable bytes just before it, estimated for every segment_alloc. */
  inactive_split_before_bytes: number;
  releasable_before_bytes: number;
  /** Estimated from the state before the entry; null for moments not looked at in detail. */
  detail: {
    free_bytes: number;
    inactive_split_bytes: number;
    /** Free blocks of the request's own free list (pool and stream), and the largest of them. */
    same_list_free_bytes: number;
    same_list_free_blocks: number;
    same_list_largest_free_block: number;
  } | null;
}

export interface DeviceFragmentation {
  device: number;
  dump: FragState;
  at: FragState | null;
  curve: CurvePoint[];
  /** When reserved − allocated was largest in the recorded window. */
  most_cached: CurvePoint | null;
  /** When non-releasable (inactive split) memory was largest in the window (first such entry). */
  non_releasable_peak: CurvePoint | null;
  segment_allocs: SegmentAllocMoment[];
  segment_allocs_detailed: number;
  notes: string[];
}

export function fragmentationOf(s: Snapshot, d: DeviceModel, opts: FragOptions = {}): DeviceFragmentation {
  const top = opts.top ?? 10;
  // First the walk of the whole curves this needs, so the moments below read them.
  const most = mostCached(d);
  const moments = segmentAllocMoments(s, d, opts.detailed);
  const sampled = curve(d, opts.samples ?? 24);
  const peak = addNonReleasable(s, d, sampled, most, moments);
  return {
    device: d.device,
    dump: fragState(dumpFreeState(s, d), top),
    at: opts.at === undefined ? null : fragState(freeStateAfter(s, d, opts.at), top),
    curve: sampled,
    most_cached: most,
    non_releasable_peak: peak,
    segment_allocs: moments,
    segment_allocs_detailed: moments.filter((m) => m.detail !== null).length,
    notes: notes(s, d),
  };
}

export function fragState(f: FreeState, top: number): FragState {
  const worst = [...f.segments]
    .filter((g) => g.gap_bytes > 0)
    .sort((x, y) => y.gap_bytes - x.gap_bytes || y.max_gap - x.max_gap)
    .slice(0, top);
  const largest = f.groups.reduce((m, g) => Math.max(m, g.largest_free_block), 0);
  const { after, groups, segments, ...figures } = f;
  return {
    after_entry: after,
    ...figures,
    largest_free_block: largest,
    free_lists: groups,
    worst_segments: worst,
    explanation: explain(f, largest),
  };
}

function explain(f: FreeState, largest: number): string[] {
  const fb = formatBytes;
  const e: string[] = [];
  if (f.reserved_bytes === 0) return ['nothing reserved.'];
  const share = (100 * f.free_bytes) / f.reserved_bytes;
  e.push(
    `${fb(f.reserved_bytes)} reserved, ${fb(f.used_bytes)} of it in blocks holding tensors; ${fb(f.free_bytes)} (${share.toFixed(1)}%) reserved but free in ${plural(f.free_blocks, 'block')}.`,
  );
  if (f.free_blocks === 0) return e;
  const best = f.groups[0]!;
  const grow = f.segments.some((g) => g.expandable)
    ? 'maps more pages onto its expandable segment, which fails only once the GPU has no free memory left'
    : 'needs a new segment (cudaMalloc), which fails once the GPU is full; expandable_segments:True would let segments grow in place instead';
  e.push(
    `The largest free block is ${fb(largest)} (${listName(best)}): a request above ${fb(best.largest_free_block)} on that stream and pool cannot reuse cached memory and ${grow}.`,
  );
  if (f.inactive_split_bytes > 0) {
    e.push(
      `${fb(f.inactive_split_bytes)} in ${plural(f.inactive_split_blocks, 'block')} is non-releasable: free pieces of segments that still hold a tensor (inactive split). empty_cache() cannot return it; only freeing the tensors beside it can.`,
    );
  }
  if (f.releasable_bytes > 0) {
    e.push(
      `${fb(f.releasable_bytes)} is in ${formatCount(f.releasable_segments)} wholly free segments: not fragmentation; empty_cache() (or the allocator itself, before it reports an OOM) returns them to the GPU.`,
    );
  }
  if (f.groups.length > 1) {
    e.push(
      `Free blocks are spread over ${f.groups.length} free lists (pool × stream): the allocator reuses a block only for requests of the same pool and stream.`,
    );
  }
  return e;
}

export function listName(g: Pick<FreeGroup, 'pool' | 'private_pool' | 'stream'>): string {
  const pool = g.private_pool === null ? `${g.pool} pool` : `${g.pool} private pool ${g.private_pool}`;
  return `${pool}, stream ${g.stream === 0 ? '0' : `0x${g.stream.toString(16)}`}`;
}

function point(d: DeviceModel, i: number): CurvePoint {
  return points(d, [i])[0]!;
}

/** The curves at entries `is` (ascending), read in one pass: the curves need not be walked whole. */
function points(d: DeviceModel, is: readonly number[]): CurvePoint[] {
  const t = d.totals;
  const c = t.curvesAfterEach(is);
  return is.map((i, q) => {
    const reserved = i >= 0 ? c.reserved[q]! : t.start.reserved;
    const allocated = i >= 0 ? c.allocated[q]! : t.start.allocated;
    const time = i >= 0 ? d.trace.timeUs[i]! : Number.NaN;
    return {
      after_entry: i,
      time_us: Number.isNaN(time) ? null : time,
      reserved_bytes: reserved,
      allocated_bytes: allocated,
      active_bytes: i >= 0 ? c.active[q]! : t.start.active,
      reserved_minus_allocated_bytes: reserved - allocated,
      inactive_split_bytes: 0,
      releasable_bytes: 0,
    };
  });
}

/**
 * Fills in the sweep's figures at every curve point and before every segment_alloc (one pass
 * over the trace for all of them) and returns the point where non-releasable memory peaked.
 */
function addNonReleasable(
  s: Snapshot,
  d: DeviceModel,
  points: CurvePoint[],
  most: CurvePoint | null,
  moments: SegmentAllocMoment[],
): CurvePoint | null {
  if (d.trace.length === 0) return null;
  const asked = [...points.map((p) => p.after_entry), ...moments.map((m) => m.entry - 1)];
  if (most !== null) asked.push(most.after_entry);
  const after = Int32Array.from(new Set(asked)).sort();
  const sweep = cachedSweep(s, d, after);
  const at = (k: number) => lowerBound(after, k);
  for (const p of most === null ? points : [...points, most]) {
    p.inactive_split_bytes = sweep.inactive_split_bytes[at(p.after_entry)]!;
    p.releasable_bytes = sweep.releasable_bytes[at(p.after_entry)]!;
  }
  for (const m of moments) {
    m.inactive_split_before_bytes = sweep.inactive_split_bytes[at(m.entry - 1)]!;
    m.releasable_before_bytes = sweep.releasable_bytes[at(m.entry - 1)]!;
  }
  return peakPoint(d, sweep);
}

const sweeps = new WeakMap<DeviceModel, { after: Int32Array; sweep: FragSweep }>();

/** The web panel asks again for each selected entry; the entries swept depend only on the options. */
function cachedSweep(s: Snapshot, d: DeviceModel, after: Int32Array): FragSweep {
  const hit = sweeps.get(d);
  if (hit !== undefined && hit.after.length === after.length && hit.after.every((k, i) => k === after[i]))
    return hit.sweep;
  const sweep = fragSweep(s, d, after);
  sweeps.set(d, { after, sweep });
  return sweep;
}

function peakPoint(d: DeviceModel, sweep: FragSweep): CurvePoint {
  const p = point(d, sweep.peak_after);
  p.inactive_split_bytes = sweep.peak_inactive_split_bytes;
  p.releasable_bytes = sweep.peak_releasable_bytes;
  return p;
}

/** Evenly spaced points of the curves over the trace (the first and last entry included). */
function curve(d: DeviceModel, samples: number): CurvePoint[] {
  const n = d.trace.length;
  if (n === 0 || samples <= 0) return [];
  const count = Math.min(n, Math.max(2, samples));
  const at: number[] = [];
  for (let j = 0; j < count; j++) {
    const i = count === 1 ? 0 : Math.round((j * (n - 1)) / (count - 1));
    if (at.at(-1) !== i) at.push(i);
  }
  return points(d, at);
}

/** Skips the moment between a segment_alloc/map and the alloc it was made for (always unallocated). */
function mostCached(d: DeviceModel): CurvePoint | null {
  const t = d.totals;
  let best = -1;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < d.trace.length; i++) {
    const a = d.trace.action[i]!;
    if (a === Action.segment_alloc || a === Action.segment_map) continue;
    const v = t.reserved[i]! - t.allocated[i]!;
    if (v > max) {
      max = v;
      best = i;
    }
  }
  return best < 0 ? null : point(d, best);
}

/**
 * Every segment_alloc with the curves just before it; the `detailed` ones with the most
 * reserved − allocated before them also get the free blocks estimated from the model's state.
 * Their sweep figures (inactive split, releasable) stay 0: `fragmentationOf` fills them in, and
 * the diagnosis, which needs only the free blocks, is spared its pass over the trace.
 */
export function segmentAllocMoments(s: Snapshot, d: DeviceModel, detailed = 100): SegmentAllocMoment[] {
  const t = d.trace;
  // The segment events (newest first) the state replay below lists anyway, not a pass of its own.
  const entries = Array.from(segmentEntries(d))
    .filter((i) => t.action[i] === Action.segment_alloc)
    .reverse();
  const befores = points(
    d,
    entries.map((i) => i - 1),
  );
  const moments = entries.map((i, k): SegmentAllocMoment => {
    const before = befores[k]!;
    const request = requestServed(d, i);
    const stream = s.traceColumns.streams[t.stream[i]!] ?? 0;
    return {
      entry: i,
      time_us: Number.isNaN(t.timeUs[i]!) ? null : t.timeUs[i]!,
      segment_bytes: t.size[i]!,
      stream,
      pool: poolOfNewSegment(s, d, t.addr[i]!, t.size[i]!, request),
      request_bytes: request,
      reserved_before_bytes: before.reserved_bytes,
      allocated_before_bytes: before.allocated_bytes,
      reserved_minus_allocated_before_bytes: before.reserved_minus_allocated_bytes,
      inactive_split_before_bytes: 0,
      releasable_before_bytes: 0,
      detail: null,
    };
  });
  const chosen = [...moments]
    .sort((x, y) => y.reserved_minus_allocated_before_bytes - x.reserved_minus_allocated_before_bytes)
    .slice(0, detailed)
    .sort((x, y) => x.entry - y.entry);
  const states = estimatedFreeStates(
    s,
    d,
    chosen.map((m) => m.entry - 1),
  );
  chosen.forEach((m, i) => {
    m.detail = detailOf(m, states[i]!);
  });
  return moments;
}

function detailOf(m: SegmentAllocMoment, f: FreeState): SegmentAllocMoment['detail'] {
  const list = f.groups.find((g) => g.pool === m.pool && g.stream === m.stream && g.private_pool === null);
  return {
    free_bytes: f.free_bytes,
    inactive_split_bytes: f.inactive_split_bytes,
    same_list_free_bytes: list?.free_bytes ?? 0,
    same_list_free_blocks: list?.free_blocks ?? 0,
    same_list_largest_free_block: list?.largest_free_block ?? 0,
  };
}

/** The allocator hands the new segment's low addresses to the request that needed it. */
function requestServed(d: DeviceModel, i: number): number | null {
  const t = d.trace;
  const lo = t.addr[i]!;
  const hi = lo + t.size[i]!;
  for (let j = i + 1; j < Math.min(t.length, i + 64); j++) {
    if (t.action[j] === Action.alloc && t.addr[j]! >= lo && t.addr[j]! < hi) return t.size[j]!;
  }
  return null;
}

function poolOfNewSegment(
  s: Snapshot,
  d: DeviceModel,
  addr: number,
  size: number,
  request: number | null,
): string {
  for (const id of d.segmentIds) {
    const seg = s.tables.segments[id]!;
    if (addr >= seg.address && addr < seg.address + seg.totalSize) return seg.pool;
  }
  if (request !== null) return request <= SMALL_REQUEST_LIMIT ? 'small' : 'large';
  return size === 2 * SMALL_REQUEST_LIMIT ? 'small' : 'large';
}

function notes(s: Snapshot, d: DeviceModel): string[] {
  const out: string[] = [];
  const f = d.allocationFacts;
  if (d.trace.length > 0) {
    out.push(
      'Free blocks at dump time are exact (the snapshot lists every block); before it they are estimated from the trace: allocations freed inside the window are taken at their request rounded to 512 bytes, so gaps can be overstated by the unsplit tails the allocator kept with a block (at most 1 MiB each).',
    );
    out.push(
      'The curves use requested bytes as the trace records them, so reserved − allocated also counts rounding inside blocks.',
    );
  } else {
    out.push('The file has no trace: only the dump-time state is known.');
  }
  if (f.orphanFrees > 0 || f.blocksBeforeRecording > 0)
    out.push(
      `${plural(f.orphanFrees + f.blocksBeforeRecording, 'allocation')} began before recording: their place is known from their free or from the dump, their stack is not.`,
    );
  if (d.segmentIds.some((id) => s.tables.segments[id]!.expandable))
    out.push(
      'Expandable segments: each mapped range shows as one segment; they grow by segment_map, so few segment_allocs appear.',
    );
  return out;
}
