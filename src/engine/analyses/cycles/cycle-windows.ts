/**
 * Which snapshot of a run a recorded cycle belongs to: the window of the cycle's rank whose trace
 * spans the collection's time, else the window that holds its step. The cells say rank and steps
 * by name; only a loaded snapshot says which times its trace spans, so the shell loads the cells
 * in the order `candidateCells` gives and asks `traceSpan` of each.
 */
import { entryTimes } from '../../model/entry-times.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { Run, RunCell } from '../../run-layout/discover.js';
import type { CycleGraph } from './cycle-file.js';

export interface TimeSpan {
  first_us: number;
  last_us: number;
}

/**
 * The cells that may hold the cycle, most likely first: its rank's (its pid's when the names
 * carry pids; cells that name no rank when the run has no others), the window holding its step
 * first, then by distance in steps.
 */
export function candidateCells(run: Run, g: Pick<CycleGraph, 'rank' | 'pid' | 'step'>): RunCell[] {
  const ranked = run.cells.filter((c) => c.rank === g.rank && (c.pid === null || c.pid === g.pid));
  const cells = ranked.length > 0 ? ranked : run.cells.filter((c) => c.rank === null);
  const distance = (c: RunCell): number => {
    if (g.step === null || c.steps === null) return Number.POSITIVE_INFINITY;
    if (c.steps.first <= g.step && g.step <= c.steps.last) return 0;
    return Math.min(Math.abs(c.steps.first - g.step), Math.abs(c.steps.last - g.step));
  };
  return cells
    .map((c, i) => ({ c, i, d: distance(c) }))
    .sort((x, y) => x.d - y.d || x.i - y.i)
    .map((x) => x.c);
}

/** Whether the cell's window names the cycle's step. */
export function holdsStep(c: RunCell, step: number | null): boolean {
  return step !== null && c.steps !== null && c.steps.first <= step && step <= c.steps.last;
}

/** From the first to the last timed entry of any device's trace; null without times. */
export function traceSpan(s: Snapshot): TimeSpan | null {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const d of s.devices) {
    const times = entryTimes(d);
    const n = d.trace.length;
    if (n === 0 || times[n - 1] === Number.NEGATIVE_INFINITY) continue;
    first = Math.min(first, times.find((t) => t !== Number.NEGATIVE_INFINITY)!);
    last = Math.max(last, times[n - 1]!);
  }
  return last === Number.NEGATIVE_INFINITY ? null : { first_us: first, last_us: last };
}

export function spanHolds(span: TimeSpan | null, timeUs: number): boolean {
  return span !== null && span.first_us <= timeUs && timeUs <= span.last_us;
}

/** Why no window was found, listing what the run has for that rank. */
export function noWindowReason(run: Run, g: Pick<CycleGraph, 'rank' | 'step'>): string {
  const mine = run.cells.filter((c) => c.rank === g.rank);
  if (run.cells.length === 0) return 'no snapshot given or found beside the cycle files';
  if (mine.length === 0) {
    const ranks = [...new Set(run.cells.map((c) => c.rank).filter((r) => r !== null))].sort((a, b) => a - b);
    return `no snapshot of rank ${g.rank} (ranks: ${ranks.join(', ') || 'none named'})`;
  }
  const step = g.step === null ? '' : ` or names step ${g.step}`;
  return `no snapshot of rank ${g.rank} spans the cycle’s time${step}`;
}

/**
 * The cycles whose window is this snapshot (the cell at `path`, whose trace spans `span`): of the
 * cell's rank (a cell naming no rank takes any, when the run names none) and collected at a time
 * the trace spans.
 */
export function windowCycles<G extends Pick<CycleGraph, 'rank' | 'pid' | 'step' | 'time_us'>>(
  run: Run,
  path: string,
  span: TimeSpan | null,
  graphs: G[],
): G[] {
  return graphs.filter(
    (g) => spanHolds(span, g.time_us) && candidateCells(run, g).some((c) => c.path === path),
  );
}
