import { formatFrame } from '../../derived/frames/short-path.js';
import { topUserFrame } from '../../derived/frames/user-frames.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { timePositions, traceStartUs } from './timeline-axis.js';

/**
 * What the timeline's hover line says beyond the level of detail's own figures: when the entry
 * under the pointer happened, counted from the trace's start (never raw epoch µs), and which
 * allocation lies there by its size and the user's frame that made it.
 */
export interface HoverFacts {
  entry: number;
  /** µs from the trace's first timed entry; null when the trace has no time_us. */
  since_start_us: number | null;
  /** The allocation asked about, or null when none was (a merged run, a free envelope part). */
  allocation: { id: number; bytes: number; frame: string | null } | null;
}

export function hoverFacts(s: Snapshot, d: DeviceModel, entry: number, alloc: number | null): HoverFacts {
  const start = traceStartUs(d);
  const k = Math.max(0, Math.min(d.trace.length - 1, entry));
  const at = d.trace.length > 0 ? timePositions(d)[k]! : Number.NaN;
  const known = alloc !== null && alloc >= 0 && alloc < d.allocations.count;
  return {
    entry,
    since_start_us: start !== null && Number.isFinite(at) ? at - start : null,
    allocation: known ? { id: alloc, bytes: d.allocations.size[alloc]!, frame: topFrame(s, d, alloc) } : null,
  };
}

/** The frame that names the allocation (the user's innermost), as every view names a frame. */
function topFrame(s: Snapshot, d: DeviceModel, alloc: number): string | null {
  const stack = d.allocations.stack[alloc]!;
  const f = stack < 0 ? undefined : topUserFrame(s.stacks.frames(stack));
  return f === undefined ? null : formatFrame(f);
}
