/**
 * Expected figures of a generated snapshot, with the definitions of shared/corpus/README.md and
 * the same keys as the corpus's expected/*.json, computed from the generator's own allocator
 * state and event counters rather than from the encoded file.
 */

import type { DeviceFigures } from '../../src/engine/analyses/summary/index.js';
import { ALLOCATED, FREE } from './blocks.js';
import { ACTION_NAMES, OOM, type SimEvent } from './events.js';
import type { OomFacts } from './oom-plant.js';
import type { PlantedFacts } from './planted.js';
import type { ExtraBufferFacts } from './rank-plant.js';
import type { SegmentView } from './views.js';

export type { DeviceFigures, PoolFigures } from '../../src/engine/analyses/summary/index.js';

export interface ExpectedFigures {
  devices: DeviceFigures[];
  /** Per device (in order), what the leak / reference-cycle options planted; absent when none. */
  planted?: PlantedFacts[];
  /** Per device (in order), the OOM planted by `oomCause`; absent when none. */
  oom_causes?: OomFacts[];
  /** The buffer planted by `extraBuffer` (the same on every device); absent when none. */
  extra_buffer?: ExtraBufferFacts;
}

export type SegmentFigures = Omit<
  DeviceFigures,
  | 'device'
  | 'trace_entries'
  | 'trace_actions'
  | 'ooms'
  | 'trace_span_us'
  | 'trace_start_allocated_bytes'
  | 'trace_peak_allocated_bytes'
  | 'trace_start_reserved_bytes'
  | 'trace_peak_reserved_bytes'
>;

function segmentFigures(views: readonly SegmentView[]): SegmentFigures {
  const f: SegmentFigures = {
    segments: views.length,
    expandable_segments: 0,
    blocks: 0,
    pools: {},
    reserved_bytes: 0,
    allocated_bytes: 0,
    active_bytes: 0,
    requested_bytes: 0,
    inactive_split_bytes: 0,
    largest_inactive_block: 0,
  };
  for (const v of views) {
    const type = v.pool.small ? 'small' : 'large';
    const pool = (f.pools[type] ??= { segments: 0, reserved_bytes: 0 });
    pool.segments++;
    pool.reserved_bytes += v.size;
    f.reserved_bytes += v.size;
    if (v.expandable) f.expandable_segments++;
    f.blocks += v.blocks.length;
    for (const b of v.blocks) {
      if (b.state === ALLOCATED) f.allocated_bytes += b.size;
      if (b.state !== FREE) {
        f.active_bytes += b.size;
        f.requested_bytes += b.requested;
      }
      if (b.state !== FREE) continue;
      f.largest_inactive_block = Math.max(f.largest_inactive_block, b.size);
      if (!v.expandable && v.blocks.length > 1) f.inactive_split_bytes += b.size;
    }
  }
  f.pools = Object.fromEntries(Object.entries(f.pools).sort(([a], [b]) => (a < b ? -1 : 1)));
  return f;
}

/** Requested bytes of active_allocated blocks (the allocated curve at dump time). */
export function allocatedRequested(views: readonly SegmentView[]): number {
  let n = 0;
  for (const v of views) for (const b of v.blocks) if (b.state === ALLOCATED) n += b.requested;
  return n;
}

/** Accumulates the trace figures over the events kept in the file. */
export class TraceFigures {
  entries = 0;
  readonly actions: number[] = ACTION_NAMES.map(() => 0);
  firstTime = 0;
  lastTime = 0;
  startAllocated = 0;
  startReserved = 0;
  peakAllocated = 0;
  peakReserved = 0;

  /** `before`: the last event dropped by the ring buffer; null when the trace starts at the beginning. */
  begin(before: SimEvent | null): void {
    this.startAllocated = before?.allocated ?? 0;
    this.startReserved = before?.reserved ?? 0;
    this.peakAllocated = this.startAllocated;
    this.peakReserved = this.startReserved;
  }

  add(e: SimEvent): void {
    if (this.entries === 0) this.firstTime = e.time;
    this.lastTime = e.time;
    this.entries++;
    this.actions[e.action]!++;
    if (e.allocated > this.peakAllocated) this.peakAllocated = e.allocated;
    if (e.reserved > this.peakReserved) this.peakReserved = e.reserved;
  }
}

export function deviceFigures(
  device: number,
  views: readonly SegmentView[],
  trace: TraceFigures | null,
  hasTime: boolean,
): DeviceFigures {
  const seg = segmentFigures(views);
  const allocatedNow = allocatedRequested(views);
  const t = trace ?? new TraceFigures();
  if (trace === null || trace.entries === 0) {
    t.startAllocated = t.peakAllocated = allocatedNow;
    t.startReserved = t.peakReserved = seg.reserved_bytes;
  }
  const actions: Record<string, number> = {};
  ACTION_NAMES.forEach((name, i) => {
    if (t.actions[i]! > 0) actions[name] = t.actions[i]!;
  });
  return {
    device,
    ...seg,
    trace_entries: t.entries,
    trace_actions: Object.fromEntries(Object.entries(actions).sort(([a], [b]) => (a < b ? -1 : 1))),
    ooms: t.actions[OOM]!,
    trace_span_us: hasTime && t.entries > 0 ? t.lastTime - t.firstTime : 0,
    trace_start_allocated_bytes: t.startAllocated,
    trace_peak_allocated_bytes: t.peakAllocated,
    trace_start_reserved_bytes: t.startReserved,
    trace_peak_reserved_bytes: t.peakReserved,
  };
}
