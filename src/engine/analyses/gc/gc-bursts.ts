import { formatBytes, formatCount, formatDuration, plural } from '../../base/format.js';
import { isMemlensHelper } from '../../derived/frames/frame-kinds.js';
import { groupBySite, NO_SITE, type SiteGroup, Sites } from '../../derived/frames/sites.js';
import {
  findIterations,
  type IterationOptions,
  type IterationSummary,
  type Iterations,
  iterationAt,
  iterationCursor,
  summarizeIterations,
} from '../../derived/iterations/iterations.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { Frame } from '../../model/stack-table.js';
import { Action } from '../../model/trace-columns.js';
import { type BurstPattern, groupBursts, medianGap } from './burst-patterns.js';
import { type Spread, spread } from './spread.js';

export interface GcOptions extends IterationOptions {
  /** How many allocating sites to list per burst (default 5). */
  top?: number;
  fullStacks?: boolean;
  /** A burst frees at least this many long-lived allocations (default 4). */
  minCount?: number;
}

export type { Spread };

export interface GcBurst {
  /** First and last free entry of the burst. */
  entry: number;
  last_entry: number;
  time_us: number | null;
  duration_us: number | null;
  /** Index and name of the iteration it happened in (null without iterations). */
  iteration: number | null;
  iteration_name: string | null;
  /** Allocations freed in the burst, and their requested bytes. */
  count: number;
  bytes: number;
  /** Of those, allocations that had lived longer than a whole iteration (or a tenth of the trace). */
  long_lived: number;
  /** Allocations whose alloc is not in the trace: they are at least as old as the window. */
  born_before_window: number;
  /** How many iterations, and µs, the freed allocations had lived (those allocated in the window). */
  lived_iterations: Spread | null;
  lived_us: Spread | null;
  /** Where the frees happened, and whether the stack passes through Python's garbage collector. */
  free_frames: Frame[];
  through_gc: boolean;
  /** Whether the free stacks carry C++ frames at all (without them the collector cannot show). */
  free_stacks_have_cpp: boolean;
  /** What shows that code freed them, not the collector (codeFreed), or null. */
  freed_by_code: string | null;
  /** The allocating sites of what was freed. */
  groups: SiteGroup[];
  other_groups: number;
}

export interface DeviceGc {
  device: number;
  iterations: IterationSummary;
  min_count: number;
  /** Every burst, in trace order. */
  bursts: GcBurst[];
  /** Bursts that repeat the same collection (same freeing and allocating sites), largest first. */
  patterns: BurstPattern[];
  /** Indices into `bursts` of those in no pattern. */
  outliers: number[];
  /** time_us of the trace's first entry, for times relative to the trace start (null: no times). */
  trace_start_us: number | null;
  /** Median distance between consecutive bursts. */
  period_iterations: number | null;
  period_us: number | null;
  verdict: string;
}

/** Without iterations, allocations that lived at least this share of the trace's entries are long-lived. */
const MIN_AGE_SHARE = 0.1;
/** Frees further apart than this are not one instant. */
const MAX_GAP_US = 1000;

/**
 * Bursts of frees of long-lived allocations: what Python's cycle collector looks like when
 * reference cycles held tensors (gc.collect() or an automatic collection frees them all at once).
 * A burst is a run of user frees with no allocation between them, from one freeing site,
 * close in time, in which at least `minCount` allocations had lived longer than an iteration.
 * The end-of-backward frees of activations are not bursts: they free what the same iteration
 * made, between the allocations of gradients; zero_grad frees gradients one iteration old.
 */
export function gcBurstsOf(s: Snapshot, d: DeviceModel, opts: GcOptions = {}): DeviceGc {
  const it = findIterations(s, d, opts);
  const minCount = opts.minCount ?? 4;
  const finder = new BurstFinder(s, d, it, opts.fullStacks ?? false, opts.top ?? 5);
  const found = finder.bursts(minCount);
  const bursts = found.map((f) => f.burst);
  const { patterns, outliers } = groupBursts(found.map((f) => ({ ...f.burst, key: f.key })));
  const t0 = d.trace.length > 0 ? d.trace.timeUs[0]! : Number.NaN;
  const result: DeviceGc = {
    device: d.device,
    iterations: summarizeIterations(it),
    min_count: minCount,
    bursts,
    patterns,
    outliers,
    trace_start_us: Number.isNaN(t0) ? null : t0,
    period_iterations: it.count > 0 ? medianGap(bursts.map((b) => b.iteration)) : null,
    period_us: medianGap(bursts.map((b) => b.time_us)),
    verdict: '',
  };
  result.verdict = verdict(result, it);
  return result;
}

class BurstFinder {
  private readonly freeSites: Sites;
  private readonly allocSites: Sites;
  private readonly minAgeEntries: number;
  /** The iteration of an allocation's start: a run's frees mostly free the current iteration's. */
  private readonly iterationOf: (i: number) => number;

  constructor(
    private readonly s: Snapshot,
    private readonly d: DeviceModel,
    private readonly it: Iterations,
    fullStacks: boolean,
    private readonly top: number,
  ) {
    this.freeSites = new Sites(s.stacks, false);
    this.allocSites = new Sites(s.stacks, fullStacks);
    const mean = summarizeIterations(it).mean_entries;
    this.minAgeEntries = mean ?? Math.max(1, Math.ceil(MIN_AGE_SHARE * d.trace.length));
    this.iterationOf = iterationCursor(it);
  }

  /** The runs of frees (see gcBurstsOf) with at least `minCount` long-lived allocations. */
  bursts(minCount: number): { burst: GcBurst; key: string }[] {
    const t = this.d.trace;
    const a = this.d.allocations;
    const out: { burst: GcBurst; key: string }[] = [];
    let run: number[] = [];
    let site = NO_SITE;
    let last = Number.NaN;
    const close = () => {
      // Most allocs close no run: no new array each time (a site is set only with a free in the run).
      if (run.length === 0) return;
      if (run.length >= minCount && this.longLived(run) >= minCount) out.push(this.describe(run));
      run = [];
      site = NO_SITE;
    };
    for (let i = 0; i < t.length; i++) {
      const action = t.action[i]!;
      if (action === Action.alloc) close();
      const id = a.ofEntry[i]!;
      const userFree =
        action === Action.free_requested || (action === Action.free_completed && a.freeRequested[id] === -1);
      if (!userFree) continue;
      const here = this.freeSites.of(t.stack[i]!);
      const apart = t.timeUs[i]! - last > MAX_GAP_US;
      if ((here !== NO_SITE && site !== NO_SITE && here !== site) || apart) close();
      if (here !== NO_SITE) site = here;
      last = t.timeUs[i]!;
      run.push(i);
    }
    close();
    return out;
  }

  private longLived(entries: number[]): number {
    const a = this.d.allocations;
    let n = 0;
    for (const i of entries) if (this.isLongLived(a.start[a.ofEntry[i]!]!, i)) n++;
    return n;
  }

  private describe(entries: number[]): { burst: GcBurst; key: string } {
    const t = this.d.trace;
    const a = this.d.allocations;
    const ids = entries.map((i) => a.ofEntry[i]!);
    const first = entries[0]!;
    const lastEntry = entries[entries.length - 1]!;
    const iterations: number[] = [];
    const micros: number[] = [];
    let before = 0;
    let bytes = 0;
    entries.forEach((i, j) => {
      const id = ids[j]!;
      const start = a.start[id]!;
      bytes += a.size[id]!;
      if (start < 0) {
        before++;
        return;
      }
      if (this.it.count > 0) iterations.push(iterationAt(this.it, i) - iterationAt(this.it, start));
      micros.push(t.timeUs[i]! - t.timeUs[start]!);
    });
    const groups = groupBySite(this.allocSites, a.stack, a.size, ids);
    const k = this.it.count > 0 ? iterationAt(this.it, first) : -1;
    const time = t.timeUs[first]!;
    const freeSite = this.freeSites.of(t.stack[first]!);
    const allocSites = [...new Set(ids.map((id) => this.allocSites.of(a.stack[id]!)))].sort((x, y) => x - y);
    const burst: GcBurst = {
      entry: first,
      last_entry: lastEntry,
      time_us: Number.isNaN(time) ? null : time,
      duration_us: Number.isNaN(time) ? null : t.timeUs[lastEntry]! - time,
      iteration: k >= 0 ? k : null,
      iteration_name: k >= 0 ? this.it.names[k]! : null,
      count: entries.length,
      bytes,
      long_lived: this.longLived(entries),
      born_before_window: before,
      lived_iterations: spread(iterations),
      lived_us: spread(micros.filter((x) => !Number.isNaN(x))),
      free_frames: this.freeSites.frames(freeSite),
      through_gc: entries.some((i) => this.throughGc(t.stack[i]!)),
      free_stacks_have_cpp: this.s.stacks.frames(t.stack[first]!).some((f) => !f.filename.endsWith('.py')),
      freed_by_code: this.codeFreed(entries),
      groups: groups.slice(0, this.top),
      other_groups: Math.max(0, groups.length - this.top),
    };
    return { burst, key: `${freeSite}|${allocSites.join(',')}` };
  }

  /**
   * Long-lived: it lived longer than the iteration that made it lasted, whatever the phase of the
   * iteration boundaries (gradients freed by the next zero_grad never do). Allocated before the
   * window counts from its start: the age is at least that.
   */
  private isLongLived(start: number, freedAt: number): boolean {
    const k = start >= 0 ? this.iterationOf(start) : -1;
    const span = k >= 0 ? this.it.end[k]! - this.it.start[k]! : this.minAgeEntries;
    return freedAt - Math.max(start, 0) > span;
  }

  /**
   * Python's collector runs on a thread running Python code, so the frees it makes carry that
   * thread's Python frames: frees with none, in a trace that records them, came from a thread
   * running no Python (autograd's backward threads). Frees whose innermost Python frame is a
   * library's that drops tensors on purpose (PURPOSEFUL_FREES) are that library's. A burst all of
   * whose frees are one or the other was freed by code; any other free leaves it undecided.
   */
  private codeFreed(entries: number[]): string | null {
    // Recorded with context="alloc", a free carries its allocation's stack (PyTorch's free():
    // `context ? context : block->context_when_allocated`): its frames then say nothing of who freed.
    if (!this.freesHaveOwnStacks()) return null;
    const reasons = new Set<string>();
    for (const i of entries) {
      const frames = this.s.stacks.frames(this.d.trace.stack[i]!);
      const why =
        frames.length === 0
          ? 'frees on a thread running no Python code (autograd’s backward threads), where the garbage collector never runs'
          : purposefulFree(frames.find(isPythonFrame));
      if (why === null) return null;
      reasons.add(why);
    }
    return [...reasons].join('; ');
  }

  private ownFreeStacks: boolean | undefined;

  /** Whether some free in the trace carries a stack other than its allocation's: frees record their own. */
  private freesHaveOwnStacks(): boolean {
    if (this.ownFreeStacks === undefined) {
      const t = this.d.trace;
      const a = this.d.allocations;
      let own = false;
      for (let i = 0; i < t.length && !own; i++) {
        if (t.action[i] !== Action.free_requested || t.stack[i]! < 0) continue;
        const id = a.ofEntry[i]!;
        own = id >= 0 && a.start[id]! >= 0 && a.stack[id] !== t.stack[i];
      }
      this.ownFreeStacks = own;
    }
    return this.ownFreeStacks;
  }

  private readonly gcStacks = new Map<number, boolean>();

  private throughGc(stack: number): boolean {
    if (stack < 0) return false;
    let known = this.gcStacks.get(stack);
    if (known === undefined) {
      known = this.s.stacks.frames(stack).some(isGcFrame);
      this.gcStacks.set(stack, known);
    }
    return known;
  }
}

function isPythonFrame(f: Frame): boolean {
  return f.filename.endsWith('.py');
}

/**
 * Library functions that drop tensors on purpose, by file and name: Optimizer.zero_grad and
 * Module.zero_grad set each gradient to None (set_to_none, the default since PyTorch 2.0:
 * torch/optim/optimizer.py, torch/nn/modules/module.py), and backward frees the graph's saved
 * tensors when it ends unless retain_graph (torch/_tensor.py Tensor.backward,
 * torch/autograd/__init__.py backward, torch/autograd/graph.py _engine_run_backward).
 */
const PURPOSEFUL_FREES: { file: string; names: string[]; why: string }[] = [
  { file: '/torch/optim/optimizer.py', names: ['zero_grad'], why: 'zero_grad dropping the gradients' },
  { file: '/torch/nn/modules/module.py', names: ['zero_grad'], why: 'zero_grad dropping the gradients' },
  { file: '/torch/_tensor.py', names: ['backward'], why: 'backward freeing its graph' },
  { file: '/torch/autograd/__init__.py', names: ['backward'], why: 'backward freeing its graph' },
  { file: '/torch/autograd/graph.py', names: ['_engine_run_backward'], why: 'backward freeing its graph' },
];

function purposefulFree(f: Frame | undefined): string | null {
  if (f === undefined) return null;
  const p = f.filename.replaceAll('\\', '/');
  return PURPOSEFUL_FREES.find((x) => x.names.includes(f.name) && p.endsWith(x.file))?.why ?? null;
}

/**
 * CPython's collector (gcmodule.c before 3.13, gc.c after), an explicit gc.collect() frame, or
 * memlens record's follow-up collection, which frees the garbage a collection saved for --cycles
 * (python/memlens/cycles.py run_followup calls gc.collect).
 */
function isGcFrame(f: Frame): boolean {
  return (
    (f.name === 'run_followup' && isMemlensHelper(f)) ||
    /(^|[^A-Za-z])(gc_collect\w*|collect_generations|collect_with_callback|delete_garbage|_PyGC_Collect|gc\.collect)/.test(
      f.name,
    ) ||
    f.filename.endsWith('gcmodule.c') ||
    f.filename.endsWith('Python/gc.c')
  );
}

function verdict(r: DeviceGc, it: Iterations): string {
  const age = it.count > 0 ? 'longer than an iteration' : `${MIN_AGE_SHARE * 100}% of the trace`;
  const over = it.count > 0 ? ` over ${plural(it.count, 'iteration')}` : ' (no iterations found)';
  if (r.bursts.length === 0)
    return `no burst of long-lived frees${over}: nothing freed ${r.min_count}+ allocations that had lived ${age} at once`;
  const largest = r.bursts.reduce((x, y) => (y.bytes > x.bytes ? y : x));
  const lived = largest.lived_iterations
    ? `${largest.lived_iterations.min}–${largest.lived_iterations.max} iterations`
    : largest.lived_us
      ? `up to ${formatDuration(largest.lived_us.max)}`
      : 'since before the recorded window';
  const every =
    r.period_iterations !== null && r.bursts.length > 1
      ? `, every ~${plural(r.period_iterations, 'iteration')}`
      : '';
  const viaGc = r.bursts.filter((b) => b.through_gc).length;
  const byCode = r.bursts.filter((b) => !b.through_gc && b.freed_by_code !== null);
  const why =
    byCode.length === r.bursts.length
      ? `code freed them: ${[...new Set(byCode.map((b) => b.freed_by_code))].join('; ')}`
      : viaGc === r.bursts.length
        ? 'the frees go through Python’s garbage collector: reference cycles held these tensors until a collection'
        : viaGc > 0
          ? `${viaGc} of them go through Python’s garbage collector (reference cycles)`
          : r.bursts.some((b) => b.free_stacks_have_cpp)
            ? 'the free stacks do not pass through Python’s garbage collector: code freed them'
            : 'the free stacks have no C++ frames to show the garbage collector (record with stacks="all")';
  return (
    `${r.bursts.length === 1 ? '1 burst frees' : `${formatCount(r.bursts.length)} bursts free`} long-lived allocations at once${every}` +
    ` (largest: ${plural(largest.count, 'allocation')}, ${formatBytes(largest.bytes)}, that had lived ${lived}); ${why}`
  );
}
