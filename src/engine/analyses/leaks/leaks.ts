import { formatBytes, plural } from '../../base/format.js';
import { formatFrame } from '../../derived/frames/short-path.js';
import { Sites } from '../../derived/frames/sites.js';
import { topUserFrame } from '../../derived/frames/user-frames.js';
import {
  findIterations,
  type IterationOptions,
  type IterationSummary,
  type Iterations,
  iterationCursor,
  summarizeIterations,
} from '../../derived/iterations/iterations.js';
import { heldAtDump, releasedAt } from '../../derived/state/lifetimes.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { Frame } from '../../model/stack-table.js';
import { type Unreleased, unreleasedIn, type Window } from './unreleased.js';

export interface LeakOptions extends IterationOptions {
  /** How many sites to list (default 10). */
  top?: number;
  fullStacks?: boolean;
  /** A site must keep allocations from at least this many iterations to count as a leak (default 3). */
  minIterations?: number;
  /** Also report what was allocated in this window and not released by its end. */
  window?: Window;
}

/** Allocations from one site that outlived the iteration after the one that made them. */
export interface LeakGroup {
  frames: Frame[];
  count: number;
  bytes: number;
  /** Of those, still allocated at the dump. */
  held_count: number;
  held_bytes: number;
  /** held_bytes over the number of iterations they came from. */
  bytes_per_iteration: number;
  /** Indices of the iterations whose allocations are still held, and the names of the first and last. */
  iterations: number[];
  first_iteration: string | null;
  last_iteration: string | null;
  /** Held allocations from several iterations, most of what outlived its iteration: a leak. */
  accumulating: boolean;
  /** The oldest and the newest of the held allocations (one when only one is held), to find them in a view. */
  held_examples: HeldAllocation[];
}

/** An allocation by its id (the tables' and the web app's) and the trace entry that made it. */
export interface HeldAllocation {
  allocation: number;
  entry: number;
}

export interface DeviceLeaks {
  device: number;
  iterations: IterationSummary;
  verdict: string;
  /** Least-squares slope of allocated bytes at the end of each iteration (warm-up left out). */
  allocated_growth_bytes_per_iteration: number | null;
  groups: LeakGroup[];
  other_groups: number;
  unreleased: Unreleased | null;
  /** The file has no allocation history: nothing can be judged, whatever the markers. */
  no_trace: boolean;
  /** time_us of the trace's first entry, for times relative to the trace start (null: no times). */
  trace_start_us: number | null;
}

/** Iterations a site's held allocations must come from to accumulate; as many or fewer tell nothing. */
export const MIN_ITERATIONS = 3;

const NO_TRACE =
  'no trace recorded, so leaks cannot be judged: record the allocation history (torch.cuda.memory._record_memory_history()) before the steps';

/**
 * Leaks across iterations. An allocation made in iteration k that is still allocated when
 * iteration k+1 ends has outlived its step (activations, temporaries and gradients of a steady
 * loop do not; gradients kept for the next zero_grad live one boundary at most). Parameters and
 * optimizer state outlive it too, but they come from one iteration (or none): only a site whose
 * held allocations come from several iterations accumulates. An iteration is judged only when
 * the next one ran to its end: the dump often cuts the last one short.
 */
export function leaksOf(s: Snapshot, d: DeviceModel, opts: LeakOptions = {}): DeviceLeaks {
  const it = findIterations(s, d, opts);
  const groups = survivorGroups(s, d, it, opts.fullStacks ?? false);
  const minIterations = opts.minIterations ?? MIN_ITERATIONS;
  for (const g of groups) {
    g.accumulating = g.iterations.length >= minIterations && 2 * g.held_count >= g.count;
  }
  groups.sort(
    (x, y) =>
      Number(y.accumulating) - Number(x.accumulating) || y.held_bytes - x.held_bytes || y.bytes - x.bytes,
  );
  const top = opts.top ?? 10;
  return {
    device: d.device,
    iterations: summarizeIterations(it),
    verdict: d.trace.length === 0 ? NO_TRACE : verdict(it, groups, minIterations),
    no_trace: d.trace.length === 0,
    trace_start_us: d.trace.length > 0 && !Number.isNaN(d.trace.timeUs[0]!) ? d.trace.timeUs[0]! : null,
    allocated_growth_bytes_per_iteration: growth(d, it),
    groups: groups.slice(0, top),
    other_groups: Math.max(0, groups.length - top),
    unreleased: opts.window ? unreleasedIn(s, d, opts.window, opts) : null,
  };
}

function survivorGroups(s: Snapshot, d: DeviceModel, it: Iterations, full: boolean): LeakGroup[] {
  const a = d.allocations;
  const n = d.trace.length;
  const sites = new Sites(s.stacks, full);
  const bySite = new Map<number, LeakGroup>();
  const iterationAt = iterationCursor(it);
  for (let id = 0; id < a.count; id++) {
    const start = a.start[id]!;
    if (start < 0) continue;
    const k = iterationAt(start);
    if (k < 0 || k + 1 >= it.complete || releasedAt(a, id) < it.end[k + 1]!) continue;
    const site = sites.of(a.stack[id]!);
    let g = bySite.get(site);
    if (g === undefined) {
      g = emptyGroup(sites.frames(site));
      bySite.set(site, g);
    }
    g.count++;
    g.bytes += a.size[id]!;
    if (!heldAtDump(a, id, n)) continue;
    g.held_count++;
    g.held_bytes += a.size[id]!;
    // Ids come in trace order: the first held one is the oldest, the last the newest.
    g.held_examples[g.held_examples.length === 0 ? 0 : 1] = { allocation: id, entry: start };
    // Allocations come in trace order, so an iteration repeats only right after itself.
    if (g.iterations[g.iterations.length - 1] !== k) g.iterations.push(k);
  }
  for (const g of bySite.values()) {
    g.bytes_per_iteration = g.iterations.length > 0 ? g.held_bytes / g.iterations.length : 0;
    g.first_iteration = it.names[g.iterations[0]!] ?? null;
    g.last_iteration = it.names[g.iterations[g.iterations.length - 1]!] ?? null;
  }
  return [...bySite.values()];
}

function emptyGroup(frames: Frame[]): LeakGroup {
  return {
    frames,
    count: 0,
    bytes: 0,
    held_count: 0,
    held_bytes: 0,
    bytes_per_iteration: 0,
    iterations: [],
    first_iteration: null,
    last_iteration: null,
    accumulating: false,
    held_examples: [],
  };
}

/**
 * Allocated bytes after each complete iteration's last entry, fitted to a line; the first
 * (warm-up) is left out when there are enough.
 */
function growth(d: DeviceModel, it: Iterations): number | null {
  const first = it.complete >= 3 ? 1 : 0;
  const last = it.complete - 1;
  const m = last - first + 1;
  if (m < 2) return null;
  const ends = d.totals.allocatedAfterEach(it.end.slice(first, last + 1).map((e) => e - 1));
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let k = first; k <= last; k++) {
    const y = ends[k - first]!;
    sx += k;
    sy += y;
    sxx += k * k;
    sxy += k * y;
  }
  return Math.round((m * sxy - sx * sy) / (m * sxx - sx * sx));
}

function verdict(it: Iterations, groups: LeakGroup[], minIterations: number): string {
  if (it.count === 0)
    return 'no iteration markers found, so leaks were not judged: this does not mean there are none';
  const leaks = groups.filter((g) => g.accumulating);
  if (leaks.length === 0) {
    if (it.count <= minIterations)
      return `only ${plural(it.count, 'iteration')}: too few to tell whether anything accumulates`;
    return `no accumulating allocations found over ${plural(it.count, 'iteration')}`;
  }
  const [worst] = leaks as [LeakGroup];
  const from = `${worst.first_iteration}–${worst.last_iteration}`;
  const more = leaks.length > 1 ? `; ${leaks.length - 1} more accumulating sites` : '';
  return (
    `${siteText(worst.frames)} grows by ${formatBytes(worst.bytes_per_iteration)} per iteration ` +
    `(${plural(worst.held_count, 'allocation')} still held, ${formatBytes(worst.held_bytes)}, ` +
    `from iterations ${from})${more}`
  );
}

/** The frame that names a site (its innermost user frame, whole stacks or not), as `name (…/file:line)`. */
export function siteText(frames: Frame[]): string {
  const f = topUserFrame(frames);
  return f === undefined ? 'allocations with no stack' : formatFrame(f);
}
