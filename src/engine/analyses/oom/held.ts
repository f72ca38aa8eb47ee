/**
 * What held the device's memory when a request failed: the live allocations then, by allocating
 * site (as `memlens peak --at ENTRY` groups them) and by category (as `memlens categories` labels
 * them). An `oom` entry allocates nothing, so the state after it is the state it failed in.
 */

import type { SiteGroup } from '../../derived/frames/sites.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { CATEGORIES, type Category, type Labels } from '../categories/categories.js';
import { liveAllocated, peakOf } from '../peak/peak.js';

export interface HeldMemory {
  /** The state after this trace entry (-1: before the first entry, i.e. the dump of a file without a trace). */
  after_entry: number;
  /** Requested bytes of the allocations live then. */
  live_bytes: number;
  live_allocations: number;
  /** The largest allocating sites (the user's frames), largest first. */
  sites: SiteGroup[];
  /** Bytes of the sites not listed. */
  other_sites_bytes: number;
  /** Live bytes per category, largest first; categories holding nothing are left out. */
  categories: { category: Category; bytes: number }[];
}

/** `labels`: labelAllocations of the device, computed once for all its OOMs. */
export function heldAt(s: Snapshot, d: DeviceModel, entry: number, labels: Labels, top = 5): HeldMemory {
  const peak = peakOf(s, d, { at: entry, top });
  const bytes = new Float64Array(CATEGORIES.length);
  for (const id of liveAllocated(d, peak.after_entry))
    bytes[labels.category[id]!]! += d.allocations.size[id]!;
  return {
    after_entry: peak.after_entry,
    live_bytes: peak.allocated_bytes,
    live_allocations: peak.live_allocations,
    sites: peak.groups,
    other_sites_bytes: peak.other_bytes,
    categories: CATEGORIES.map((category, c) => ({ category, bytes: bytes[c]! }))
      .filter((c) => c.bytes > 0)
      .sort((a, b) => b.bytes - a.bytes),
  };
}
