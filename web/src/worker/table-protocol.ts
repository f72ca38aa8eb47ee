import type { TablePage } from '../../../src/engine/views/tables/index.js';
import type { TimelineAxis } from '../../../src/engine/views/timeline/index.js';

/** The Blocks and Events tables' and the timeline search's messages (merged into protocol.ts's Queries). */
export type TableKind = 'events' | 'blocks';

export interface TableSpec {
  kind: TableKind;
  /** Conditions as the CLI's --filter takes them ("size>=1048576", "frame~model.py"). */
  filter: string[];
  /** Column, '-' first for descending; null keeps id order. */
  sort: string | null;
  /** Blocks only: keep the allocations made in this timeline window and unreleased at its end. */
  unreleased: { axis: TimelineAxis; window: [number, number] } | null;
}

export interface TableSelected {
  /** Names this selection; pages of an older one are refused. */
  version: number;
  columns: string[];
  /** Rows before filtering, and after. */
  total: number;
  count: number;
  /** Values of the table's category column (events: action, blocks: state) for its filter. */
  categories: string[];
  /**
   * Blocks: the selected rows' requested bytes in all, the largest and the smallest (with
   * "unreleased in range", MindStudio Insight's Unreleased Total / Max / Min Block); null for
   * events or no rows.
   */
  bytes: { total: number; max: number; min: number } | null;
}

export interface TableQueries {
  table: { args: { device: number; spec: TableSpec }; result: TableSelected };
  tableRows: {
    args: { device: number; kind: TableKind; version: number; from: number; to: number };
    result: TablePage & { version: number };
  };
  tablePosition: { args: { device: number; kind: TableKind; version: number; row: number }; result: number };
  tableCsv: { args: { device: number; kind: TableKind; version: number }; result: string[] };
  search: { args: { device: number; term: string }; result: { term: string; ids: Int32Array } };
}
