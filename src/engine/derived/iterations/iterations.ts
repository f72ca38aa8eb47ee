import { entriesAtTimes } from '../../model/entry-times.js';
import type { Annotation, DeviceModel, Snapshot } from '../../model/snapshot.js';
import { periodicAnchors } from './periodicity.js';

/**
 * Where the training (or serving) loop's iterations begin and end in one device's trace, so that
 * analyses can ask "which iteration made this allocation, and did it outlive it?". Iterations
 * come, in order of trust, from:
 * - a marker the user names (`--marker`): record_function annotations whose name starts with it,
 *   else a function name in the stacks;
 * - `external_annotations` that mark steps: `ProfilerStep#N` spans, else one of the
 *   record_functions PyTorch emits once per step (optimizer step, data loader, zero_grad);
 * - the periodicity of the trace: a call site that allocates once per iteration, at regular
 *   intervals, across the trace.
 */
export type IterationSource = 'profiler steps' | 'annotation' | 'frame' | 'periodicity' | 'none';

export interface Iterations {
  source: IterationSource;
  /** What marks an iteration, in words (or why none were found). */
  marker: string;
  count: number;
  /** Iteration k covers trace entries [start[k], end[k]); ascending, not overlapping. */
  start: Int32Array;
  end: Int32Array;
  /** Label of each iteration (the annotation name, else `#k`). */
  names: string[];
  /** Iterations known to have run to their end: all but the last unless an END annotation closed it. */
  complete: number;
  /** With none found: each way of finding them that was tried, and what it found. */
  tried: string[];
}

export interface IterationOptions {
  /** Annotation name prefix, or function name in the stacks, that starts each iteration. */
  marker?: string;
}

/** record_functions PyTorch emits once per training step, most telling first. */
const STEP_ANNOTATIONS = ['Optimizer.step#', 'enumerate(DataLoader)#', 'Optimizer.zero_grad#'];
const PROFILER_STEP = /^ProfilerStep#\d+$/;

/** Per device and marker: the diagnosis's leak and GC findings both ask, and the answer never changes. */
const found = new WeakMap<DeviceModel, Map<string | undefined, Iterations>>();

export function findIterations(s: Snapshot, d: DeviceModel, opts: IterationOptions = {}): Iterations {
  let byMarker = found.get(d);
  if (byMarker === undefined) found.set(d, (byMarker = new Map()));
  let it = byMarker.get(opts.marker);
  if (it === undefined) byMarker.set(opts.marker, (it = search(s, d, opts)));
  return it;
}

function search(s: Snapshot, d: DeviceModel, opts: IterationOptions): Iterations {
  if (d.trace.length === 0) return none('no trace recorded', []);
  const starts = deviceStarts(s.annotations, d.device);
  if (opts.marker !== undefined) return fromMarker(d, starts, s, opts.marker);
  const tried: string[] = [];
  const steps = starts.filter((a) => PROFILER_STEP.test(a.name));
  if (steps.length > 0) {
    const ends = deviceAnnotations(s.annotations, d.device).filter(
      (a) => a.stage === 'END' && PROFILER_STEP.test(a.name),
    );
    const found = fromSpans(d, steps, ends, 'profiler steps', 'ProfilerStep#N annotations');
    if (found.count > 0) return found;
    tried.push(`ProfilerStep#N annotations: ${steps.length} found, none spanning trace entries`);
  } else
    tried.push(`ProfilerStep#N annotations: ${starts.length === 0 ? 'the file has no annotations' : 'none'}`);
  for (const prefix of STEP_ANNOTATIONS) {
    const marked = starts.filter((a) => a.name.startsWith(prefix));
    const found = fromSpans(d, marked, [], 'annotation', `'${prefix}…' annotations`);
    if (found.count > 1) return found;
    // One step marker: the trace holds about one step, and a regular site is an inner loop.
    if (marked.length === 1) {
      tried.push(`'${prefix}…' annotations: one, so the trace holds about one step`);
      return none(`one '${prefix}…' annotation: the trace holds about one step`, tried);
    }
  }
  if (starts.length > 0)
    tried.push(
      `per-step record_function annotations (${STEP_ANNOTATIONS.map((p) => `'${p}…'`).join(', ')}): none`,
    );
  const periodic = periodicAnchors(s, d);
  if ('why' in periodic) {
    tried.push(`a call site that allocates once per step at a regular interval: ${periodic.why}`);
    return none(
      'no ProfilerStep annotations and no allocation site that repeats at a regular interval',
      tried,
    );
  }
  return consecutive(periodic.starts, d.trace.length, 'periodicity', periodic.marker);
}

/** The iteration that contains entry `i` or last began before it; -1 before the first. */
export function iterationAt(it: Iterations, i: number): number {
  let lo = 0;
  let hi = it.count - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (it.start[mid]! <= i) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * `iterationAt` for entries asked in about ascending order (allocations by id): an entry in the
 * iteration of the last answer or the next one costs two comparisons, any other a search.
 */
export function iterationCursor(it: Iterations): (i: number) => number {
  let k = -1;
  return (i) => {
    const { start, count } = it;
    if (k >= 0 && i < start[k]!) k = iterationAt(it, i);
    else if (k + 1 < count && start[k + 1]! <= i)
      k = k + 2 < count && start[k + 2]! <= i ? iterationAt(it, i) : k + 1;
    return k;
  };
}

function none(marker: string, tried: string[] = [marker]): Iterations {
  return {
    source: 'none',
    marker,
    count: 0,
    start: new Int32Array(0),
    end: new Int32Array(0),
    names: [],
    complete: 0,
    tried,
  };
}

function deviceAnnotations(all: Annotation[], device: number): Annotation[] {
  const mine = all.filter((a) => a.device === device || a.device < 0);
  // record_function runs on the CPU: its `device` is whatever was current, on the same clock.
  return (mine.length > 0 ? mine : all).filter((a) => !Number.isNaN(a.timeUs));
}

function deviceStarts(all: Annotation[], device: number): Annotation[] {
  return deviceAnnotations(all, device)
    .filter((a) => a.stage === 'START')
    .sort((x, y) => x.timeUs - y.timeUs);
}

/**
 * Iterations from START annotations; each ends at its matching END when given, else where the
 * next begins (the last one at the end of the trace).
 */
function fromSpans(
  d: DeviceModel,
  starts: Annotation[],
  ends: Annotation[],
  source: IterationSource,
  marker: string,
): Iterations {
  const t = d.trace;
  if (starts.length === 0 || t.length === 0 || Number.isNaN(t.timeUs[0]!)) return none(marker);
  const closing = matchingEnds(starts, ends);
  const endTimes = starts.map((_, k) => closing[k] ?? starts[k + 1]?.timeUs ?? Infinity);
  // Starts at the first entry at their time, ends after the last one: one pass finds both.
  const bounds = entriesAtTimes(
    d,
    [...starts.map((a) => a.timeUs), ...endTimes],
    starts.map(() => false).concat(endTimes.map(() => true)),
  );
  const first = bounds.subarray(0, starts.length);
  const last = bounds.subarray(starts.length);
  const kept: number[] = [];
  for (let k = 0; k < starts.length; k++) {
    const prevEnd = kept.length > 0 ? last[kept[kept.length - 1]!]! : 0;
    if (first[k]! < last[k]! && first[k]! >= prevEnd) kept.push(k);
  }
  return {
    source,
    marker,
    count: kept.length,
    start: Int32Array.from(kept, (k) => first[k]!),
    end: Int32Array.from(kept, (k) => last[k]!),
    names: kept.map((k) => starts[k]!.name),
    complete:
      kept.length > 0 && closing[kept[kept.length - 1]!] === undefined ? kept.length - 1 : kept.length,
    tried: [],
  };
}

/**
 * The time of each START's END: the first END of its name at or after it. Starts come sorted by
 * time, so one cursor per name walks that name's ENDs once (a search per start was quadratic:
 * half a second on a trace of 13,000 steps).
 */
function matchingEnds(starts: Annotation[], ends: Annotation[]): (number | undefined)[] {
  const byName = new Map<string, number[]>();
  for (const e of ends) {
    const list = byName.get(e.name);
    if (list) list.push(e.timeUs);
    else byName.set(e.name, [e.timeUs]);
  }
  for (const list of byName.values()) list.sort((x, y) => x - y);
  const cursor = new Map<string, number>();
  return starts.map((a) => {
    const list = byName.get(a.name);
    if (list === undefined) return undefined;
    let k = cursor.get(a.name) ?? 0;
    while (k < list.length && list[k]! < a.timeUs) k++;
    cursor.set(a.name, k);
    return list[k];
  });
}

function fromMarker(d: DeviceModel, starts: Annotation[], s: Snapshot, marker: string): Iterations {
  const marked = starts.filter((a) => a.name.startsWith(marker));
  if (marked.length > 0) return fromSpans(d, marked, [], 'annotation', `'${marker}…' annotations`);
  const found = fromFrame(s, d, marker);
  if (found.count > 0) return found;
  return none(`no annotation starts with '${marker}' and no frame is named '${marker}'`);
}

/**
 * Each run of consecutive entries whose stack passes through function `name` starts an
 * iteration (entries without a stack do not break a run): pick a function called once per step.
 */
function fromFrame(s: Snapshot, d: DeviceModel, name: string): Iterations {
  const t = d.trace;
  const hasFrame = stacksThrough(s, name);
  const starts: number[] = [];
  let inside = false;
  for (let i = 0; i < t.length; i++) {
    const stack = t.stack[i]!;
    if (stack < 0) continue;
    const here = hasFrame[stack] === 1;
    if (here && !inside) starts.push(i);
    inside = here;
  }
  return consecutive(starts, t.length, 'frame', `calls to '${name}'`);
}

function stacksThrough(s: Snapshot, name: string): Uint8Array {
  const out = new Uint8Array(s.stacks.stackCount);
  for (let id = 0; id < out.length; id++) {
    for (const f of s.stacks.stack(id)) {
      if (s.stacks.frame(f).name === name) {
        out[id] = 1;
        break;
      }
    }
  }
  return out;
}

/** Iterations that start at the given entries, each running to the next start. */
function consecutive(starts: number[], n: number, source: IterationSource, marker: string): Iterations {
  if (starts.length === 0) return none(marker);
  return {
    source,
    marker,
    count: starts.length,
    start: Int32Array.from(starts),
    end: Int32Array.from(starts, (_, k) => starts[k + 1] ?? n),
    names: starts.map((_, k) => `#${k}`),
    complete: starts.length - 1,
    tried: [],
  };
}

/** What the reports print about the iterations they used. */
export interface IterationSummary {
  source: IterationSource;
  marker: string;
  count: number;
  first_entry: number | null;
  last_entry: number | null;
  first_name: string | null;
  last_name: string | null;
  mean_entries: number | null;
  /** With none found: each way of finding them that was tried, and what it found. */
  tried: string[];
}

export function summarizeIterations(it: Iterations): IterationSummary {
  const k = it.count - 1;
  return {
    source: it.source,
    marker: it.marker,
    count: it.count,
    first_entry: k < 0 ? null : it.start[0]!,
    last_entry: k < 0 ? null : it.end[k]! - 1,
    first_name: it.names[0] ?? null,
    last_name: it.names[k] ?? null,
    mean_entries: k < 0 ? null : Math.round((it.end[k]! - it.start[0]!) / it.count),
    tried: it.tried,
  };
}
