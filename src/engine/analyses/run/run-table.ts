/**
 * The run as a table: one row per snapshot and device, with the figures a run is compared by.
 * Ranks come from the file names; a file whose name has no rank counts its devices as ranks
 * (one process driving several GPUs).
 *
 * Each row belongs to a lane (a line of the table: a replica's rank on one device) and a column
 * (a step window, or a dump of another kind). The text table, the web heatmap and the findings
 * all name a row by its lane, so where one cell holds two dumps (two processes of one rank, a
 * copy of a file) each gets its own lane (`rank 0 #2`) and every figure is shown and named once.
 */
import type { RunCell, StepWindow } from '../../run-layout/discover.js';
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
  replica: number | null;
  rank: number;
  device: number;
  /** The device's name (`cuda:1`, `npu:1`). */
  device_label: string;
  pid: number | null;
  steps: StepWindow | null;
  /** The row's line: its replica, rank, device and, for a second dump in one cell, its place. */
  lane: string;
  /** How the table and the findings name the lane: "rank 0", "r1 rank 0", "rank 0 cuda:1", "rank 0 #2". */
  lane_label: string;
  /** The row's column: a step window ("3"), or a dump of another kind ("post 3", "end", "OOM"). */
  column: string;
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
        replica: cell.replica,
        rank: cell.rank ?? d.device,
        device: d.device,
        device_label: d.label,
        pid: cell.pid,
        steps: cell.steps,
        lane: '',
        lane_label: '',
        column: columnLabel(cell),
        figures,
        ooms: d.ooms,
      });
    }
  }
  assignLanes(rows);
  return rows;
}

const KIND_WORDS: Record<RunCell['kind'], string> = {
  step: '',
  'post-update': 'post',
  manual: 'manual',
  end: 'end',
  exit: 'exit',
  oom: 'OOM',
  other: 'dump',
};

/** A column's name: the window ("3", "3-4"), else the kind and the step it was written at, if any. */
export function columnLabel(cell: Pick<RunCell, 'kind' | 'steps' | 'tag'>): string {
  if (cell.kind === 'step' && cell.steps !== null) return stepLabel(cell.steps);
  const named =
    cell.kind === 'manual' || cell.kind === 'end'
      ? (cell.tag ?? KIND_WORDS[cell.kind])
      : KIND_WORDS[cell.kind];
  return cell.steps === null ? named : `${named} ${stepLabel(cell.steps)}`;
}

/**
 * Lanes: a replica's rank on one device (the device named where a rank's files hold several).
 * A second dump of a lane in one column goes to a lane of its own, `#2`; the dump of the process
 * the lane's other columns come from (its most frequent pid) keeps the lane, so a lane is one
 * process's series across steps.
 */
function assignLanes(rows: RunRow[]): void {
  const base = (r: RunRow) => `${r.replica ?? ''}:${r.rank}`;
  const devices = new Map<string, Set<number>>();
  const pids = new Map<string, Map<number | null, number>>();
  for (const r of rows) {
    devices.set(base(r), (devices.get(base(r)) ?? new Set()).add(r.device));
    const mine = pids.get(`${base(r)}:${r.device}`) ?? new Map<number | null, number>();
    pids.set(`${base(r)}:${r.device}`, mine.set(r.pid, (mine.get(r.pid) ?? 0) + 1));
  }
  const cells = new Map<string, RunRow[]>();
  for (const r of rows) {
    const where = `${base(r)}:${r.device}|${r.column}`;
    cells.set(where, [...(cells.get(where) ?? []), r]);
  }
  for (const list of cells.values()) {
    const count = pids.get(`${base(list[0]!)}:${list[0]!.device}`)!;
    const ordered = [...list].sort((a, b) => count.get(b.pid)! - count.get(a.pid)!);
    ordered.forEach((r, slot) => {
      r.lane = `${base(r)}:${r.device}:${slot}`;
      r.lane_label = [
        r.replica === null ? '' : `r${r.replica} `,
        `rank ${r.rank}`,
        devices.get(base(r))!.size > 1 ? ` ${r.device_label}` : '',
        slot > 0 ? ` #${slot + 1}` : '',
      ].join('');
    });
  }
}

/** Lanes in table order: replica, rank, device, then the second dumps of a cell. */
export function laneOrder(rows: RunRow[]): { lane: string; label: string }[] {
  const first = new Map<string, RunRow>();
  for (const r of rows) if (!first.has(r.lane)) first.set(r.lane, r);
  const slot = (r: RunRow) => Number(r.lane.split(':').at(-1));
  return [...first.values()]
    .sort(
      (a, b) =>
        (a.replica ?? -1) - (b.replica ?? -1) || a.rank - b.rank || a.device - b.device || slot(a) - slot(b),
    )
    .map((r) => ({ lane: r.lane, label: r.lane_label }));
}

/**
 * Columns in run order (the order rows come in): step windows, each other dump beside its step
 * (verl's post-update dump before it, the others after).
 */
export function columnOrder(rows: RunRow[]): string[] {
  return [...new Set(rows.map((r) => r.column))];
}

/**
 * Cells (a replica's rank in one column) holding more than one dump file: two processes of one
 * rank, or a copy. Each dump is a lane of its own (a `#2`, or its device); this names them together.
 */
export function sharedCells(rows: RunRow[]): { column: string; rows: RunRow[] }[] {
  const byCell = new Map<string, RunRow[]>();
  for (const r of rows) {
    const key = `${r.replica ?? ''}:${r.rank}|${r.column}`;
    byCell.set(key, [...(byCell.get(key) ?? []), r]);
  }
  return [...byCell.values()]
    .map((list) => list.filter((r, i) => list.findIndex((x) => x.file === r.file) === i))
    .filter((list) => list.length > 1)
    .map((list) => ({ column: list[0]!.column, rows: list }));
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
  return most((r) => stepLabel(r.steps)) >= 3 || most((r) => r.lane) >= 3;
}
