import type { Outlier, RunReport } from '../../../../src/engine/analyses/run/index.js';
import {
  columnOrder,
  laneOrder,
  type RunFigure,
  type RunRow,
} from '../../../../src/engine/analyses/run/index.js';

/**
 * One lane of the heatmap (run-table.ts): a replica's rank on one device, and a line of its own for
 * a second dump in one cell, named as the findings name it.
 */
export interface GridRank {
  key: string;
  rank: number;
  device: number;
  label: string;
}

/** A column: a step window, or a kind of dump outside them (post-update, end, OOM...), as the text table has. */
export interface GridColumn {
  key: string;
  label: string;
  /** The step of a window or of a dump written at a step; null for dumps with none. */
  step: number | null;
  kind: 'step' | 'oom' | 'other';
}

export interface GridCell {
  row: RunRow;
  /** Index of the snapshot in report.snapshots (and RunData.sources). */
  snapshot: number;
  /** The outliers of the shown figure this cell is part of. */
  flags: Outlier[];
}

export interface RunGrid {
  ranks: GridRank[];
  columns: GridColumn[];
  /** cells[rank][column]; null where the rank has no snapshot for that column. */
  cells: (GridCell | null)[][];
  /** The smallest and largest value of the figure over the windows (the colour scale). */
  range: [number, number];
}

function columnOf(r: RunRow): GridColumn {
  const kind = r.kind === 'oom' ? 'oom' : r.kind === 'step' && r.steps !== null ? 'step' : 'other';
  return { key: r.column, label: r.column, step: r.steps?.first ?? null, kind };
}

/** The report as a ranks × step-windows grid of one figure, with the outliers of that figure on it. */
export function runGrid(report: RunReport, figure: RunFigure): RunGrid {
  const snapshotOf = new Map(report.snapshots.map((s, i) => [s.file, i]));
  const ranks = new Map<string, GridRank>();
  const columns = new Map<string, GridColumn>();
  for (const r of report.rows) {
    if (!ranks.has(r.lane))
      ranks.set(r.lane, { key: r.lane, rank: r.rank, device: r.device, label: r.lane_label });
    const c = columnOf(r);
    columns.set(c.key, c);
  }
  const rankList = laneOrder(report.rows).map((l) => ranks.get(l.lane)!);
  // The run's own column order, as the text table has it (verl's post-update dump before its step).
  const columnList = columnOrder(report.rows).map((key) => columns.get(key)!);
  const rankIndex = new Map(rankList.map((r, i) => [r.key, i]));
  const columnIndex = new Map(columnList.map((c, i) => [c.key, i]));
  const cells: (GridCell | null)[][] = rankList.map(() => columnList.map(() => null));
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const row of report.rows) {
    const i = rankIndex.get(row.lane)!;
    const j = columnIndex.get(row.column)!;
    const flags = report.outliers.filter((o) => o.figure === figure && covers(o, row));
    cells[i]![j] = { row, snapshot: snapshotOf.get(row.file) ?? -1, flags };
    const v = row.figures[figure];
    // An OOM dump (drawn red) holds a dying process's memory: it would wash out the windows' scale.
    if (v !== null && row.kind !== 'oom') {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  return { ranks: rankList, columns: columnList, cells, range: lo <= hi ? shownRange(lo, hi) : [0, 0] };
}

/**
 * The range the shades and lines span: at least a tenth of the largest value, so ranks that
 * differ by a fraction of a percent (a clean run) look alike, and one 7% above them stands out.
 */
export function shownRange(lo: number, hi: number): [number, number] {
  return [Math.max(0, Math.min(lo, hi - 0.1 * hi)), hi];
}

/** Whether an outlier finding names this row (its lane, within its windows). */
export function covers(o: Outlier, r: RunRow): boolean {
  return (
    r.kind === 'step' &&
    r.steps !== null &&
    o.lane === r.lane &&
    r.steps.first >= o.steps.first &&
    r.steps.last <= o.steps.last
  );
}
