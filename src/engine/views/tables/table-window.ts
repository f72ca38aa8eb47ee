import type { Cell, RowTable } from './tables.js';

/**
 * A screenful of a selected table: the page holds only the permutation's length and asks for
 * the rows it shows, so a table of millions of rows costs the page nothing.
 */
export interface TablePage {
  /** Position of the first row in the selection. */
  from: number;
  /** Row ids (entry or allocation ids) of the positions [from, from + ids.length). */
  ids: Int32Array;
  cells: Cell[][];
}

export function tablePage(table: RowTable, rows: Int32Array, from: number, to: number): TablePage {
  const lo = Math.max(0, Math.min(from, rows.length));
  const ids = rows.slice(lo, Math.max(lo, Math.min(to, rows.length)));
  const cells = Array.from(ids, (r) => table.columns.map((_, c) => table.cell(r, c)));
  return { from: lo, ids, cells };
}

/** Where row id `row` sits in the selection, or -1 when it was filtered out. */
export function positionOf(rows: Int32Array, row: number): number {
  return rows.indexOf(row);
}
