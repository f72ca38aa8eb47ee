/**
 * A run against its baseline cell by cell: each (rank, step window) against the baseline's same
 * cell, so a regression that shows at step 3 and never reaches the rank's peak (a window that
 * peaks higher for other reasons) is still caught, with its rank and step. The saved baseline
 * keeps per cell its peaks and its largest sites at the allocated peak, the sites' frames once in a
 * table the cells point into (a run's cells share their code), so it stays small.
 */
import type { Frame } from '../../model/stack-table.js';
import type { SiteSide } from '../diff/diff-side.js';
import { type RunRow, windowRows } from '../run/run-table.js';
import type { CheckSubject, Place } from './check-subject.js';

export interface BaselineCell {
  /** The run table's lane (replica, rank, device, second dump) and column (the step window): the cell's key. */
  lane: string;
  column: string;
  rank: number;
  device: number;
  step: number;
  /** Null for a window without a trace. */
  peak_allocated: number | null;
  peak_reserved: number | null;
  /** Its largest sites at its allocated peak: an index into `cell_sites`, bytes and count. */
  sites: { site: number; bytes: number; count: number }[];
}

/** Sites kept per cell: a run may have thousands of cells. */
const CELL_SITES = 10;

export type CellFigure = 'peak_allocated' | 'peak_reserved';

/** The cells of a run (none for a file), and the frames of the sites they name. */
export function baselineCells(subject: CheckSubject): { cells: BaselineCell[]; cell_sites: Frame[][] } {
  const table: Frame[][] = [];
  const index = new Map<string, number>();
  const siteIndex = (frames: Frame[]) => {
    const key = JSON.stringify(frames);
    let i = index.get(key);
    if (i === undefined) {
      i = table.push(frames) - 1;
      index.set(key, i);
    }
    return i;
  };
  const cells = cellRows(subject).map((r) => ({
    ...cellKey(r),
    peak_allocated: r.figures.peak_allocated,
    peak_reserved: r.figures.peak_reserved,
    sites: cellSides(subject, r)
      .slice(0, CELL_SITES)
      .map((s) => ({ site: siteIndex(plain(s.frames)), bytes: s.bytes, count: s.count })),
  }));
  return { cells, cell_sites: table };
}

function cellRows(subject: CheckSubject): RunRow[] {
  return subject.kind === 'run' ? windowRows(subject.report.rows) : [];
}

function cellKey(r: RunRow): Pick<BaselineCell, 'lane' | 'column' | 'rank' | 'device' | 'step'> {
  return { lane: r.lane, column: r.column, rank: r.rank, device: r.device, step: r.steps!.first };
}

function cellSides(subject: CheckSubject, r: RunRow): SiteSide[] {
  const side = subject.results.get(r.file)?.side.devices.find((d) => d.device === r.device);
  return side?.at_peak.sites ?? [];
}

/** Without `extra`: a saved baseline, read back, has none. */
function plain(frames: readonly Frame[]): Frame[] {
  return frames.map(({ filename, line, name }) => ({ filename, line, name, extra: undefined }));
}

/** One cell of the run beside the baseline's same cell. */
export interface CellPair {
  place: Place;
  value: number;
  was: number;
  /** The baseline cell's sites, as the diff reads them. */
  sites: SiteSide[];
}

export interface CellComparison {
  /** Cells of the run with a traced window in the baseline's same cell, in run order. */
  pairs: CellPair[];
  /** "rank 2, step 3": the run's cells the baseline lacks. */
  missing: string[];
  /** The baseline's cells this run lacks (a rank that stopped dumping, a step that never came). */
  absent: string[];
}

export function compareCells(
  subject: CheckSubject,
  cells: BaselineCell[],
  table: Frame[][],
  figure: CellFigure,
): CellComparison {
  const byKey = new Map(cells.map((c) => [`${c.lane}|${c.column}`, c]));
  const out: CellComparison = { pairs: [], missing: [], absent: [] };
  const rows = cellRows(subject);
  const present = new Set(rows.map((r) => `${r.lane}|${r.column}`));
  // A rank's device is named only where the baseline had several for it, as the run table does.
  const devices = new Map<number, Set<number>>();
  for (const c of cells) devices.set(c.rank, (devices.get(c.rank) ?? new Set()).add(c.device));
  for (const c of cells)
    if (c[figure] !== null && !present.has(`${c.lane}|${c.column}`))
      out.absent.push(
        `rank ${c.rank}${devices.get(c.rank)!.size > 1 ? ` device ${c.device}` : ''}, step ${c.column}`,
      );
  for (const r of rows) {
    const value = r.figures[figure];
    if (value === null) continue;
    const base = byKey.get(`${r.lane}|${r.column}`);
    const was = base?.[figure];
    if (base === undefined || was === null || was === undefined) {
      out.missing.push(`${r.lane_label}, step ${r.column}`);
      continue;
    }
    out.pairs.push({
      place: { file: r.file, device: r.device, rank: r.rank, step: r.steps!.first },
      value,
      was,
      sites: base.sites.map((s) => ({ bytes: s.bytes, count: s.count, frames: table[s.site]! })),
    });
  }
  return out;
}

/** A saved baseline's cells and site table checked; a one-line reason otherwise. */
export function cellsProblem(cells: unknown, table: unknown): string | null {
  if (!Array.isArray(table) || !table.every(isFrames))
    return 'baseline cell_sites is missing or malformed (each: a list of frames)';
  if (!Array.isArray(cells) || !cells.every((c) => isCell(c, table.length)))
    return 'baseline cells is malformed (each: lane, column, rank, device, step, peak_allocated, peak_reserved, sites)';
  return null;
}

function isCell(c: unknown, sites: number): boolean {
  const x = c as BaselineCell;
  const peak = (v: unknown) => v === null || typeof v === 'number';
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.lane === 'string' &&
    typeof x.column === 'string' &&
    [x.rank, x.device, x.step].every((n) => typeof n === 'number') &&
    peak(x.peak_allocated) &&
    peak(x.peak_reserved) &&
    Array.isArray(x.sites) &&
    x.sites.every(
      (s) =>
        Number.isInteger(s?.site) &&
        s.site >= 0 &&
        s.site < sites &&
        typeof s.bytes === 'number' &&
        typeof s.count === 'number',
    )
  );
}

export function isFrames(frames: unknown): boolean {
  return (
    Array.isArray(frames) &&
    frames.every(
      (f) => typeof f?.filename === 'string' && typeof f.line === 'number' && typeof f.name === 'string',
    )
  );
}
