/**
 * What accounts for reserved memory above allocated, for `memlens check`: at the reserved peak
 * (where the free space held in segments raised the peak), the segments holding a tensor with the
 * most free bytes, and the allocating sites of the blocks that keep them reserved: empty_cache()
 * cannot return those free pieces, only freeing the blocks beside them can. The state is the one
 * `memlens frag --at` shows.
 */
import { Sites } from '../../derived/frames/sites.js';
import { freeStateAfter, type SegmentGaps } from '../../derived/state/free-blocks.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { Frame } from '../../model/stack-table.js';
import { stateAfter } from '../../model/state-at.js';
import { fragState } from './fragmentation.js';

export interface FragBlame {
  device: number;
  /** The moment: after this entry (-1: before the first, or no trace), at the reserved peak with the most allocated. */
  after_entry: number;
  /** True when the state is the dump's own (nothing changed memory after the moment). */
  exact: boolean;
  /** Reserved but free then, and the part of it in wholly free segments (releasable, not fragmentation). */
  free_bytes: number;
  releasable_bytes: number;
  /** Segments holding a tensor, most free bytes first. */
  segments: SegmentGaps[];
  /** Sites of the blocks in those segments, by the free bytes of the segments they keep reserved. */
  sites: PinningSite[];
}

export interface PinningSite {
  /** Free bytes of the listed segments this site holds a block in (each segment counted whole). */
  free_bytes: number;
  /** How many of the listed segments it holds a block in. */
  segments: number;
  /** Its own live bytes in them. */
  bytes: number;
  frames: Frame[];
}

export function fragmentationBlame(s: Snapshot, d: DeviceModel, top = 5): FragBlame {
  const k = fullestAtReservedPeak(d);
  const state = fragState(freeStateAfter(s, d, k), Number.POSITIVE_INFINITY);
  const segments = state.worst_segments.filter((g) => g.used_bytes > 0).slice(0, top);
  return {
    device: d.device,
    after_entry: k,
    exact: state.exact,
    free_bytes: state.free_bytes,
    releasable_bytes: state.releasable_bytes,
    segments,
    sites: pinningSites(s, d, k, segments),
  };
}

/**
 * The moment, while reserved memory stays at its peak, with the most allocated: the peak is first
 * reached by a segment_alloc, before the request it was made for fills it, and that new empty
 * segment is no fragmentation.
 */
function fullestAtReservedPeak(d: DeviceModel): number {
  const t = d.totals;
  const reserved = (i: number) => (i >= 0 ? t.reserved[i]! : t.start.reserved);
  const allocated = (i: number) => (i >= 0 ? t.allocated[i]! : t.start.allocated);
  const peak = reserved(t.peakReservedAt);
  let best = t.peakReservedAt;
  for (let i = best + 1; i < d.trace.length && reserved(i) === peak; i++)
    if (allocated(i) > allocated(best)) best = i;
  return best;
}

/** Each live allocation inside a listed segment, grouped by its allocating site. */
function pinningSites(s: Snapshot, d: DeviceModel, k: number, segments: SegmentGaps[]): PinningSite[] {
  const a = d.allocations;
  const sites = new Sites(s.stacks, false);
  const bySite = new Map<number, { bytes: number; pinned: Set<SegmentGaps> }>();
  for (const id of stateAfter(s, d, k).allocations) {
    const addr = a.addr[id]!;
    const seg = segments.find((g) => addr >= g.address && addr < g.address + g.size);
    if (seg === undefined) continue;
    const site = sites.of(a.stack[id]!);
    const entry = bySite.get(site) ?? { bytes: 0, pinned: new Set<SegmentGaps>() };
    entry.bytes += a.size[id]!;
    entry.pinned.add(seg);
    bySite.set(site, entry);
  }
  return [...bySite.entries()]
    .map(([site, e]) => ({
      free_bytes: [...e.pinned].reduce((n, g) => n + g.gap_bytes, 0),
      segments: e.pinned.size,
      bytes: e.bytes,
      frames: sites.frames(site),
    }))
    .sort((x, y) => y.free_bytes - x.free_bytes || y.bytes - x.bytes);
}
