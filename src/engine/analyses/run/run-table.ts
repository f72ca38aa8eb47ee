/**
 * The run as a table: one row per snapshot and device, with the figures a run is compared by.
 * Ranks come from the file names; a file whose name has no rank counts its devices as ranks
 * (one process driving several GPUs).
 */
import type { RunCell, StepWindow } from '../../run/discover.js';
import type { CellResult } from './cell-result.js';

/** The figures of a cell the run compares, from the summary (corpus/README definitions). */
/** Most telling first: what tensors held at the dump, then the window's peak, then the cache. */
export const RUN_FIGURES = {
  allocated: 'allocated_bytes',
  peak_allocated: 'trace_peak_allocated_bytes',
  reserved: 'reserved_bytes',
  peak_reserved: 'trace_peak_reserved_bytes',
  non_releasable: 'inactive_split_bytes',
} as const;

export type RunFigure = keyof typeof RUN_FIGURES;

/** Figures over the window's trace (a window's own peak); the others are the state at its dump. */
export const WINDOW_FIGURES: RunFigure[] = ['peak_allocated', 'peak_reserved'];

export interface RunSnapshot {
  cell: RunCell;
  /** null when the file could not be read (see error). */
  result: CellResult | null;
  error?: string;
}

export interface RunRow {
  file: string;
  kind: RunCell['kind'];
  rank: number;
  device: number;
  steps: StepWindow | null;
  /** Peaks are null when the window has no trace. */
  figures: Record<RunFigure, number | null>;
  ooms: number;
}

export function runRows(snapshots: RunSnapshot[]): RunRow[] {
  const rows: RunRow[] = [];
  for (const { cell, result } of snapshots) {
    if (result === null) continue;
    for (const d of result.devices) {
      const traced = d.trace_entries > 0;
      const figures = {} as Record<RunFigure, number | null>;
      for (const [name, key] of Object.entries(RUN_FIGURES) as [RunFigure, (typeof RUN_FIGURES)[RunFigure]][])
        figures[name] = !traced && WINDOW_FIGURES.includes(name) ? null : d[key];
      rows.push({
        file: cell.path,
        kind: cell.kind,
        rank: cell.rank ?? d.device,
        device: d.device,
        steps: cell.steps,
        figures,
        ooms: d.ooms,
      });
    }
  }
  return rows;
}

/** "3" or "3-4": how the run names a window. */
export function stepLabel(steps: StepWindow | null): string {
  if (steps === null) return '—';
  return steps.first === steps.last ? String(steps.first) : `${steps.first}-${steps.last}`;
}

/** Rows of regular step windows (not OOM or stray dumps), the ones compared across the run. */
export function windowRows(rows: RunRow[]): RunRow[] {
  return rows.filter((r) => r.kind === 'step' && r.steps !== null);
}

/**
 * Whether the run holds what its findings compare: a step with 3 ranks or more (ranks against
 * their step's median), a rank with 3 windows or more (jumps, growth). Without either, "nothing
 * stands out" would be a verdict with no evidence behind it.
 */
export function runComparable(rows: RunRow[]): boolean {
  const most = (key: (r: RunRow) => string) => {
    const n = new Map<string, number>();
    for (const r of windowRows(rows)) n.set(key(r), (n.get(key(r)) ?? 0) + 1);
    return Math.max(0, ...n.values());
  };
  return most((r) => stepLabel(r.steps)) >= 3 || most((r) => `${r.rank}:${r.device}`) >= 3;
}
