import { groupBySite, type SiteGroup, Sites } from '../../derived/frames/sites.js';
import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';

export interface PeakOptions {
  /** Trace entry to look at instead of the peak (-1: before the first entry). */
  at?: number;
  /** Look at the last entry at or before this time_us instead of the peak. */
  timeUs?: number;
  /** How many stack groups to list (default 10). */
  top?: number;
  /** Group by the whole stack instead of the frames in the user's own code. */
  fullStacks?: boolean;
}

export interface DevicePeak {
  device: number;
  /** 'allocated peak', or the entry/time the caller asked for. */
  moment: 'allocated peak' | 'entry' | 'time';
  /** The state after this trace entry (-1: before the first entry). */
  after_entry: number;
  time_us: number | null;
  allocated_bytes: number;
  reserved_bytes: number;
  peak_reserved_bytes: number;
  peak_reserved_after_entry: number;
  live_allocations: number;
  /** Live requested bytes whose allocating stack the file does not have. */
  unknown_stack_bytes: number;
  groups: SiteGroup[];
  /** Bytes and count of the groups beyond `top`. */
  other_bytes: number;
  other_groups: number;
}

/**
 * What held memory at the allocated peak of the recorded window (or at any entry): the
 * allocations live then (allocated, not yet freed by the user), grouped by allocating stack.
 */
export function peakOf(s: Snapshot, d: DeviceModel, opts: PeakOptions = {}): DevicePeak {
  const { at, moment } = momentOf(d, opts);
  const ids = liveAllocated(d, at);
  const a = d.allocations;
  const groups = groupBySite(new Sites(s.stacks, opts.fullStacks ?? false), a.stack, a.size, ids);
  const top = opts.top ?? 10;
  const rest = groups.slice(top);
  const unknown = groups.find((g) => g.frames.length === 0);
  const t = d.totals;
  const now = figuresAfter(d, at, moment);
  return {
    device: d.device,
    moment,
    after_entry: at,
    time_us: at >= 0 && !Number.isNaN(d.trace.timeUs[at]!) ? d.trace.timeUs[at]! : null,
    allocated_bytes: now.allocated,
    reserved_bytes: now.reserved,
    peak_reserved_bytes: t.peak.reserved,
    peak_reserved_after_entry: t.peakReservedAt,
    live_allocations: ids.length,
    unknown_stack_bytes: unknown?.bytes ?? 0,
    groups: groups.slice(0, top),
    other_bytes: rest.reduce((n, g) => n + g.bytes, 0),
    other_groups: rest.length,
  };
}

function momentOf(d: DeviceModel, opts: PeakOptions): { at: number; moment: DevicePeak['moment'] } {
  const last = d.trace.length - 1;
  if (opts.at !== undefined) return { at: Math.max(-1, Math.min(opts.at, last)), moment: 'entry' };
  if (opts.timeUs !== undefined) {
    let at = -1;
    for (let i = 0; i <= last; i++) if (d.trace.timeUs[i]! <= opts.timeUs) at = i;
    return { at, moment: 'time' };
  }
  // With no trace, the only moment the file knows is the dump.
  return { at: last < 0 ? -1 : d.totals.peakAllocatedAt, moment: 'allocated peak' };
}

/**
 * Allocated and reserved bytes after entry `at`: the allocated peak's are known from the load,
 * another moment's are read in one pass; the whole curves (24 bytes an entry) are never walked.
 */
function figuresAfter(d: DeviceModel, at: number, moment: DevicePeak['moment']) {
  const t = d.totals;
  if (at < 0) return t.start;
  if (moment === 'allocated peak')
    return { allocated: t.peak.allocated, reserved: t.reservedAtAllocatedPeak };
  const c = t.curvesAfterEach([at]);
  return { allocated: c.allocated[0]!, reserved: c.reserved[0]! };
}

/** Allocations alive after entry `at` and not yet freed by the user (free_requested). */
export function liveAllocated(d: DeviceModel, at: number): Int32Array {
  const a = d.allocations;
  return d.live.aliveAfter(at).filter((id) => {
    const freed = a.freeRequested[id]!;
    return freed === -1 || (freed !== FREED_BEFORE_WINDOW && freed > at);
  });
}
