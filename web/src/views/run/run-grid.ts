import type { Outlier } from '../../../../src/engine/analyses/run/outliers.js';
import type { RunReport } from '../../../../src/engine/analyses/run/run-report.js';
import { type RunFigure, type RunRow, stepLabel } from '../../../../src/engine/analyses/run/run-table.js';

/** One rank's line of the heatmap (a rank with several devices has a line per device). */
export interface GridRank {
  key: string;
  rank: number;
  device: number;
  label: string;
}

/** A column: a step window, or the dumps outside them (OOM dumps, dumps without a step). */
export interface GridColumn {
  key: string;
  label: string;
  /** First step of a window; null for the OOM and other-dump columns. */
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

const rankKey = (r: { rank: number; device: number }) => `${r.rank}:${r.device}`;

function columnOf(r: RunRow): GridColumn {
  if (r.kind === 'oom') return { key: 'oom', label: 'OOM', step: null, kind: 'oom' };
  if (r.kind === 'step' && r.steps !== null)
    return { key: stepLabel(r.steps), label: stepLabel(r.steps), step: r.steps.first, kind: 'step' };
  return { key: 'other', label: 'dump', step: null, kind: 'other' };
}

const KIND_ORDER = { step: 0, other: 1, oom: 2 } as const;

/** The report as a ranks × step-windows grid of one figure, with the outliers of that figure on it. */
export function runGrid(report: RunReport, figure: RunFigure): RunGrid {
  const snapshotOf = new Map(report.snapshots.map((s, i) => [s.file, i]));
  const ranks = new Map<string, GridRank>();
  const columns = new Map<string, GridColumn>();
  for (const r of report.rows) {
    ranks.set(rankKey(r), { key: rankKey(r), rank: r.rank, device: r.device, label: `rank ${r.rank}` });
    const c = columnOf(r);
    columns.set(c.key, c);
  }
  const rankList = [...ranks.values()].sort((a, b) => a.rank - b.rank || a.device - b.device);
  const devicesOf = new Map<number, number>();
  for (const r of rankList) devicesOf.set(r.rank, (devicesOf.get(r.rank) ?? 0) + 1);
  for (const r of rankList) if (devicesOf.get(r.rank)! > 1) r.label = `rank ${r.rank} · cuda:${r.device}`;
  const columnList = [...columns.values()].sort(
    (a, b) =>
      KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.step ?? 0) - (b.step ?? 0) || (a.key < b.key ? -1 : 1),
  );
  const rankIndex = new Map(rankList.map((r, i) => [r.key, i]));
  const columnIndex = new Map(columnList.map((c, i) => [c.key, i]));
  const cells: (GridCell | null)[][] = rankList.map(() => columnList.map(() => null));
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const row of report.rows) {
    const i = rankIndex.get(rankKey(row))!;
    const j = columnIndex.get(columnOf(row).key)!;
    // The first snapshot of a rank in a column is drawn (a second OOM dump of a rank is listed, not drawn).
    if (cells[i]![j] !== null) continue;
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

/** Whether an outlier finding names this row (its rank and device, within its windows). */
export function covers(o: Outlier, r: RunRow): boolean {
  return (
    r.kind === 'step' &&
    r.steps !== null &&
    o.rank === r.rank &&
    o.device === r.device &&
    r.steps.first >= o.steps.first &&
    r.steps.last <= o.steps.last
  );
}
