import { SnapshotError } from '../../base/errors.js';
import { groupBySite, type SiteGroup, Sites } from '../../derived/frames/sites.js';
import { releasedAt } from '../../derived/state/lifetimes.js';
import { entryAtTime, entryTimes } from '../../model/entry-times.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';

/** A window of the trace: inclusive entry indices, or inclusive time_us bounds. */
export type Window = { entries: [number, number] } | { timeUs: [number, number] };

export interface Unreleased {
  /** The window as entries (from > to: no entry falls in it). */
  from_entry: number;
  to_entry: number;
  from_time_us: number | null;
  to_time_us: number | null;
  /** Allocations made in the window and still allocated after its last entry. */
  count: number;
  bytes: number;
  groups: SiteGroup[];
  other_bytes: number;
  other_groups: number;
}

/**
 * "Unreleased in range" (MindStudio Insight's view): the allocations made inside a window and
 * not yet freed by the user at its end, grouped by allocating site. Over one iteration of a
 * steady loop this is what the iteration hands on to the next; over a whole run, what it kept.
 */
export function unreleasedIn(
  s: Snapshot,
  d: DeviceModel,
  window: Window,
  opts: { top?: number; fullStacks?: boolean } = {},
): Unreleased {
  const t = d.trace;
  const [from, to] = windowEntries(d, window);
  const a = d.allocations;
  const ids = unreleasedIds(d, from, to);
  let bytes = 0;
  for (const id of ids) bytes += a.size[id]!;
  const groups = groupBySite(new Sites(s.stacks, opts.fullStacks ?? false), a.stack, a.size, ids);
  const top = opts.top ?? 10;
  const rest = groups.slice(top);
  const time = (i: number) => (i >= 0 && i < t.length && !Number.isNaN(t.timeUs[i]!) ? t.timeUs[i]! : null);
  return {
    from_entry: from,
    to_entry: to,
    from_time_us: time(from),
    to_time_us: time(to),
    count: ids.length,
    bytes,
    groups: groups.slice(0, top),
    other_bytes: rest.reduce((n, g) => n + g.bytes, 0),
    other_groups: rest.length,
  };
}

/** Ids (ascending) of the allocations made in entries [from, to] and not freed by the user by `to`. */
export function unreleasedIds(d: DeviceModel, from: number, to: number): number[] {
  const a = d.allocations;
  const ids: number[] = [];
  for (let id = 0; id < a.count; id++) {
    const start = a.start[id]!;
    if (start >= from && start <= to && releasedAt(a, id) > to) ids.push(id);
  }
  return ids;
}

/** The window as inclusive entry indices, clipped to the trace. */
export function windowEntries(d: DeviceModel, w: Window): [number, number] {
  const n = d.trace.length;
  if ('entries' in w) return [Math.max(0, w.entries[0]), Math.min(n - 1, w.entries[1])];
  const [lo, hi] = w.timeUs;
  if (n > 0 && Number.isNaN(d.trace.timeUs[0]!))
    throw new SnapshotError('its trace has no time_us (PyTorch < 2.2): give the window as entries');
  const times = entryTimes(d);
  const from = entryAtTime(times, lo);
  const after = entryAtTime(times, hi, true);
  return [from, after - 1];
}
