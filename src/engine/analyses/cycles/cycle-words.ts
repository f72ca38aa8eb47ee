/** A recorded cycle in the words the CLI and the web app share. */
import { formatBytes, formatCount, plural, sinceStart } from '../../base/format.js';
import { formatFrame } from '../../derived/frames/short-path.js';
import { topUserFrame } from '../../derived/frames/user-frames.js';
import type { AllocationLink, BurstLink } from './cycle-links.js';
import type { CycleReport, CycleTensorReport } from './cycle-report.js';

/** "rank 0, pid 4242, collection 3 (generation 2), step 40". */
export function cycleTitle(r: CycleReport): string {
  const step = r.step === null ? '' : `, step ${formatCount(r.step)}`;
  return `rank ${r.rank}, pid ${r.pid}, collection ${formatCount(r.collection)} (generation ${r.generation})${step}`;
}

/** An epoch µs time as a UTC wall-clock time with milliseconds. */
export function wallClockText(us: number): string {
  return `${new Date(us / 1000).toISOString().replace('T', ' ').replace('Z', '')} UTC`;
}

/** "held 2.00 MiB in 2 tensors (6 nodes, 5 on the cycle)". */
export function heldText(r: CycleReport): string {
  const tensors = plural(r.tensors.length, 'tensor');
  const cut = r.truncated ? '; the graph was cut at the recorder’s node limit' : '';
  return `held ${formatBytes(r.bytes)} in ${tensors} (${plural(r.nodes, 'node')}, ${formatCount(r.cycle_nodes)} on the cycle${cut})`;
}

/** "float32[512, 1024] 2.00 MiB". */
export function tensorText(t: CycleTensorReport): string {
  const view = t.counted ? '' : ', a view of a storage counted above';
  return `${t.dtype}[${t.shape.join(', ')}] ${formatBytes(t.bytes)}${view}`;
}

/** Which snapshot, matched how; or why none. */
export function windowText(r: CycleReport): string {
  if (r.snapshot === null) return `no snapshot: ${r.snapshot_reason}`;
  const how =
    r.snapshot.by === 'time'
      ? 'its trace spans the collection’s time'
      : `its window names step ${r.step}, but its trace does not span the collection’s time`;
  return `snapshot ${r.snapshot.file} (${how})`;
}

/** "allocated at forward (model.py:176), entry 1,234": the site by the project's frame filter. */
export function allocationText(a: AllocationLink): string {
  if (a.site === null && a.alloc_entry < 0)
    return 'allocated before the recorded window (the snapshot has no stack for it)';
  const site = a.site === null ? 'a site with no stack' : formatFrame(a.site);
  const when = a.alloc_entry < 0 ? 'before the recorded window' : `entry ${formatCount(a.alloc_entry)}`;
  return `allocated at ${site}, ${when}`;
}

/** The site from the recorder's own stack of the tensor, when the snapshot could not give one. */
export function recordedSiteText(t: CycleTensorReport): string | null {
  const f = t.stack === null ? undefined : topUserFrame(t.stack);
  return f === undefined ? null : `allocated at ${formatFrame(f)} (the recorder’s stack)`;
}

/** "freed by the GC burst at entry 5,678 (1.25 s into the trace): 8 allocations, 20.0 MiB". */
export function burstText(b: BurstLink): string {
  const at = sinceStart(b.time_us, b.trace_start_us);
  const when = at === null ? '' : ` (${at} into the trace)`;
  return `freed by the GC burst at entry ${formatCount(b.entry)}${when}: ${plural(b.count, 'allocation')}, ${formatBytes(b.bytes)}`;
}
