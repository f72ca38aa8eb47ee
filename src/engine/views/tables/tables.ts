import { SnapshotError } from '../../base/errors.js';
import { formatFrame } from '../../derived/frames/short-path.js';
import { topUserFrame } from '../../derived/frames/user-frames.js';
import { lowerBound } from '../../model/lower-bound.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';

/**
 * The event and block tables (MindStudio Insight's two tables) as row accessors over the model's
 * columns: nothing is materialized per row until a row is printed, so a 10M-entry trace can be
 * filtered, sorted (a permutation of row ids) and streamed out.
 */
export type Cell = string | number | null;

export interface RowTable {
  readonly columns: readonly string[];
  readonly length: number;
  cell(row: number, column: number): Cell;
}

export const EVENT_COLUMNS = [
  'id',
  'action',
  'address',
  'size',
  'stream',
  'time_us',
  'allocated_bytes',
  'active_bytes',
  'reserved_bytes',
  'frame',
] as const;

export const BLOCK_COLUMNS = [
  'id',
  'address',
  'size',
  'block_size',
  'state',
  'alloc_event',
  'free_requested_event',
  'free_completed_event',
  'frame',
] as const;

/**
 * One row per trace entry; totals are after the entry; frame is the innermost user frame. A
 * cell is a switch, not an array of closures: one function the row writers' loops can inline,
 * instead of a call through ten targets per cell of millions of rows.
 */
export function eventTable(s: Snapshot, d: DeviceModel): RowTable {
  const t = d.trace;
  const totals = d.totals;
  const names = s.traceColumns.actionNames;
  const streams = s.traceColumns.streams;
  const frame = frameText(s);
  const known = (v: number): number | null => (Number.isNaN(v) ? null : v);
  const cell = (i: number, c: number): Cell => {
    switch (c) {
      case 0:
        return i;
      case 1:
        return names[t.action[i]!] ?? 'missing';
      case 2:
        return known(t.addr[i]!);
      case 3:
        return known(t.size[i]!);
      case 4:
        return streams[t.stream[i]!]!;
      case 5:
        return known(t.timeUs[i]!);
      case 6:
        return totals.allocated[i]!;
      case 7:
        return totals.active[i]!;
      case 8:
        return totals.reserved[i]!;
      default:
        return frame(t.stack[i]!);
    }
  };
  return { columns: EVENT_COLUMNS, length: t.length, cell };
}

/** The block table's `state` values: at dump, allocated / freed by the user but pending / freed. */
export const BLOCK_STATES = ['active_allocated', 'active_pending_free', 'freed'] as const;

/**
 * One row per allocation the file knows of (paired alloc/free entries, blocks alive at dump,
 * frees whose alloc was not recorded). size is the requested size, block_size the rounded size
 * (known only for blocks alive at dump); events are -1 when outside the recorded window.
 */
export function blockTable(s: Snapshot, d: DeviceModel): RowTable {
  const a = d.allocations;
  const n = d.trace.length;
  const frame = frameText(s);
  const blockSize = s.tables.blocks.size;
  const state = (id: number): string => {
    if (a.end[id]! < n) return BLOCK_STATES[2];
    return a.freeRequested[id]! >= 0 || a.freeRequested[id]! === -2 ? BLOCK_STATES[1] : BLOCK_STATES[0];
  };
  // A switch for the reason eventTable's cell is one.
  const cell = (i: number, c: number): Cell => {
    switch (c) {
      case 0:
        return i;
      case 1:
        return a.addr[i]!;
      case 2:
        return a.size[i]!;
      case 3:
        return a.block[i]! >= 0 ? blockSize[a.block[i]!]! : null;
      case 4:
        return state(i);
      case 5:
        return a.start[i]!;
      case 6:
        return a.freeRequested[i]! >= 0 ? a.freeRequested[i]! : -1;
      case 7:
        return a.end[i]! < n ? a.end[i]! : -1;
      default:
        return frame(a.stack[i]!);
    }
  };
  return { columns: BLOCK_COLUMNS, length: a.count, cell };
}

/** The innermost frame in the user's code, as "name (file:line)"; computed once per stack id. */
function frameText(s: Snapshot): (stack: number) => string {
  const cache: (string | undefined)[] = new Array(s.stacks.stackCount);
  return (stack) => {
    if (stack < 0) return '';
    let text = cache[stack];
    if (text === undefined) {
      const f = topUserFrame(s.stacks.frames(stack));
      text = f ? formatFrame(f, { fullPath: true }) : '';
      cache[stack] = text;
    }
    return text;
  };
}

export interface Selection {
  /** Inclusive row range [from, to]. */
  range?: [number, number];
  /** Conditions, all of which a row must meet: "size>=1048576", "action=alloc", "frame~model.py". */
  filter?: string[];
  /** Column to sort by; a leading '-' sorts descending. */
  sort?: string;
  /** Only these rows (ascending), e.g. the allocations unreleased in a window. */
  within?: ArrayLike<number>;
}

interface Condition {
  column: number;
  op: '=' | '!=' | '>=' | '<=' | '>' | '<' | '~';
  value: string;
}

/** Row ids in output order. Filtering reads only the columns named in conditions. */
export function selectRows(table: RowTable, sel: Selection): Int32Array {
  const conditions = (sel.filter ?? []).map((f) => parseCondition(table, f));
  const [from, to] = sel.range ?? [0, table.length - 1];
  const ids = candidates(table.length, from, to, sel.within);
  let kept = ids.length;
  if (conditions.length > 0) {
    kept = 0;
    for (let i = 0; i < ids.length; i++) {
      const r = ids[i]!;
      if (conditions.every((c) => meets(table.cell(r, c.column), c))) ids[kept++] = r;
    }
  }
  const rows = ids.subarray(0, kept);
  return sel.sort ? sortRows(table, rows, sel.sort) : rows;
}

/** The rows of [from, to] (or of `within` inside it), in one typed array, before filtering. */
function candidates(length: number, from: number, to: number, within?: ArrayLike<number>): Int32Array {
  const lo = Math.max(0, from);
  const hi = Math.min(to, length - 1);
  if (within === undefined) {
    const ids = new Int32Array(Math.max(0, hi - lo + 1));
    for (let i = 0; i < ids.length; i++) ids[i] = lo + i;
    return ids;
  }
  const ids = new Int32Array(within.length);
  let n = 0;
  for (let i = 0; i < within.length; i++) {
    const r = within[i]!;
    if (r >= lo && r <= hi) ids[n++] = r;
  }
  return ids.subarray(0, n);
}

const CONDITION = /^([a-z_]+)\s*(!=|>=|<=|=|>|<|~)\s*(.*)$/;

function parseCondition(table: RowTable, text: string): Condition {
  const m = CONDITION.exec(text.trim());
  if (!m || (m[2] !== '~' && /^[<>=!]/.test(m[3]!))) {
    throw new SnapshotError(`bad filter '${text}': expected COLUMN OP VALUE, OP one of = != >= <= > < ~`);
  }
  return { column: columnIndex(table, m[1]!), op: m[2] as Condition['op'], value: m[3]! };
}

function columnIndex(table: RowTable, name: string): number {
  const i = table.columns.indexOf(name);
  if (i < 0) throw new SnapshotError(`no column '${name}' (columns: ${table.columns.join(', ')})`);
  return i;
}

function meets(cell: Cell, c: Condition): boolean {
  if (c.op === '~') return String(cell ?? '').includes(c.value);
  if (typeof cell === 'number' && c.value.trim() !== '' && !Number.isNaN(Number(c.value))) {
    return compare(cell - Number(c.value), c.op);
  }
  const text = String(cell ?? '');
  return compare(text < c.value ? -1 : text > c.value ? 1 : 0, c.op);
}

function compare(diff: number, op: Condition['op']): boolean {
  switch (op) {
    case '=':
      return diff === 0;
    case '!=':
      return diff !== 0;
    case '>=':
      return diff >= 0;
    case '<=':
      return diff <= 0;
    case '>':
      return diff > 0;
    default:
      return diff < 0;
  }
}

/**
 * Rows in the order of one column, ties in row order. Each row's key becomes its rank among the
 * column's distinct values, and a counting sort places the rows: linear in the rows plus a native
 * sort of the distinct values, so millions of rows sort in about a second without a comparator.
 */
function sortRows(table: RowTable, ids: Int32Array, spec: string): Int32Array {
  const descending = spec.startsWith('-');
  const column = columnIndex(table, descending ? spec.slice(1) : spec);
  const { ranks, distinct } = rankCells(table, ids, column);
  const starts = new Int32Array(distinct + 1);
  for (let i = 0; i < ids.length; i++) {
    const r = descending ? distinct - 1 - ranks[i]! : ranks[i]!;
    ranks[i] = r;
    starts[r + 1]!++;
  }
  for (let r = 0; r < distinct; r++) starts[r + 1]! += starts[r]!;
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[starts[ranks[i]!]!++] = ids[i]!;
  return out;
}

/** Each row's rank among the column's distinct values, in compareCells order. */
function rankCells(
  table: RowTable,
  ids: Int32Array,
  column: number,
): { ranks: Uint32Array; distinct: number } {
  const cells = Array.from(ids, (r) => table.cell(r, column));
  const ranks = new Uint32Array(ids.length);
  if (cells.every((c) => c === null || typeof c === 'number')) {
    // null sorts first, as compareCells has it.
    const keys = Float64Array.from(cells, (c) => (c === null ? Number.NEGATIVE_INFINITY : (c as number)));
    const sorted = keys.slice().sort();
    let distinct = 0;
    for (let i = 0; i < sorted.length; i++)
      if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[distinct++] = sorted[i]!;
    const values = sorted.subarray(0, distinct);
    for (let i = 0; i < keys.length; i++) ranks[i] = lowerBound(values, keys[i]!);
    return { ranks, distinct };
  }
  const values = [...new Set(cells)].sort(compareCells);
  const rankOf = new Map(values.map((v, i) => [v, i]));
  for (let i = 0; i < cells.length; i++) ranks[i] = rankOf.get(cells[i]!)!;
  return { ranks, distinct: values.length };
}

function compareCells(a: Cell, b: Cell): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : 1;
}
