import { formatFrame } from '../derived/frames/short-path.js';
import { topUserFrame } from '../derived/frames/user-frames.js';
import { FREED_BEFORE_WINDOW } from '../model/allocations.js';
import { BlockState } from '../model/segments.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { TABLES, type TableName } from './schema.js';

/**
 * The export tables' rows as column batches (schema.ts gives names and types): plain typed arrays
 * a writer hands on in bulk, never an object per row, so a 10M-entry trace streams out in batches
 * of bounded size. Numbers are doubles with NaN for null; text is dictionary-coded (code -1: null);
 * a column that counts (entry, allocation ids) or repeats one value (snapshot, device) is only its
 * rule, which a writer turns into SQL instead of staging millions of copies. A batch's arrays are
 * valid until the next batch is asked for: the large tables fill the same arrays for every batch.
 */
export interface TextColumn {
  codes: Int32Array;
  dictionary: readonly string[];
}

/** Row r holds first + step * r: step 0 for one value throughout, 1 for a count. */
export interface SeriesColumn {
  first: number;
  step: 0 | 1;
}

export type Column = Float64Array | TextColumn | SeriesColumn;

export interface Batch {
  rows: number;
  columns: Column[];
}

/** One snapshot of an export, with what a run directory says of it. */
export interface ExportSource {
  snapshot: Snapshot;
  /** The export's own id for it (the `snapshot` column every table carries). */
  id: number;
  file: string;
  kind: string | null;
  lastStep: number | null;
}

export const DEFAULT_BATCH_ROWS = 1 << 20;

export function isText(c: Column): c is TextColumn {
  return !(c instanceof Float64Array) && 'codes' in c;
}

export function isSeries(c: Column): c is SeriesColumn {
  return !(c instanceof Float64Array) && 'step' in c;
}

/** A number column's value at `row` (NaN: null). */
export function numberAt(c: Float64Array | SeriesColumn, row: number): number {
  return c instanceof Float64Array ? c[row]! : c.first + c.step * row;
}

/** The rows of `table` for one snapshot, in batches of at most `maxRows`. */
export function* tableBatches(
  table: TableName,
  src: ExportSource,
  maxRows = DEFAULT_BATCH_ROWS,
): Generator<Batch> {
  if (table !== 'events' && table !== 'allocations') {
    yield SMALL_TABLES[table](src);
    return;
  }
  const perDevice = table === 'events' ? eventBatches : allocationBatches;
  let any = false;
  for (const d of src.snapshot.devices) {
    for (const batch of perDevice(src, d, maxRows)) {
      any = true;
      yield batch;
    }
  }
  // Every snapshot writes every table, so a reader's glob never comes up empty.
  if (!any) yield emptyBatch(table);
}

function emptyBatch(table: TableName): Batch {
  const columns = TABLES[table].map(
    (c): Column => (c.type === 'text' ? { codes: new Int32Array(0), dictionary: [] } : new Float64Array(0)),
  );
  return { rows: 0, columns };
}

const SMALL_TABLES: Record<Exclude<TableName, 'events' | 'allocations'>, (src: ExportSource) => Batch> = {
  snapshots: snapshotRows,
  segments: segmentRows,
  blocks: blockRows,
  frames: frameRows,
  stacks: stackRows,
  annotations: annotationRows,
};

const constant = (v: number): SeriesColumn => ({ first: v, step: 0 });
const counting = (first: number): SeriesColumn => ({ first, step: 1 });
const orNaN = (v: number | null | undefined): number => (v === null || v === undefined ? Number.NaN : v);
const text = (values: readonly (string | null)[]): TextColumn => ({
  codes: Int32Array.from(values, (v, i) => (v === null ? -1 : i)),
  dictionary: values.map((v) => v ?? ''),
});

function eventBatches(src: ExportSource, d: DeviceModel, maxRows: number): Generator<Batch> {
  const cols = src.snapshot.traceColumns;
  // Entries without an action (a malformed file) read 'missing', as the events table prints them.
  const dictionary = [...cols.actionNames, 'missing'];
  const missing = dictionary.length - 1;
  const known = cols.actionNames.length;
  const streams = cols.streams;
  const t = d.trace;
  const { action, stream: streamCode, stack: stackId } = t;
  const totals = d.totals;
  // One stream throughout (the common case) is a constant, not a column of copies.
  const oneStream = isConstant(streamCode, t.length);
  const size = Math.min(maxRows, t.length);
  const [codesOf, streamOf, stackOf] = [
    reused(Int32Array, size),
    reused(Float64Array, size),
    reused(Float64Array, size),
  ];
  return batched(t.length, maxRows, (from, n) => {
    const to = from + n;
    // Walked only as far as this batch: the first batch goes to the writer at once.
    const curves = totals.curvesBetween(from, to);
    const codes = codesOf(n);
    const stream = oneStream ? constant(streams[streamCode[0] ?? 0]!) : streamOf(n);
    const stack = stackOf(n);
    for (let i = 0; i < n; i++) {
      const a = action[from + i]!;
      codes[i] = a < known ? a : missing;
      const st = stackId[from + i]!;
      stack[i] = st < 0 ? Number.NaN : st;
    }
    if (stream instanceof Float64Array)
      for (let i = 0; i < n; i++) stream[i] = streams[streamCode[from + i]!]!;
    // Views, not copies: a batch is written before the model changes (it never does).
    return [
      constant(src.id),
      constant(d.device),
      counting(from),
      { codes, dictionary },
      t.addr.subarray(from, to),
      t.size.subarray(from, to),
      stream,
      t.timeUs.subarray(from, to),
      curves.allocated,
      curves.active,
      curves.reserved,
      stack,
      t.deviceFree ? t.deviceFree.subarray(from, to) : constant(Number.NaN),
    ];
  });
}

/** The allocation states, as the `blocks` command names them. */
const ALLOCATION_STATES = ['active_allocated', 'active_pending_free', 'freed'];

function allocationBatches(src: ExportSource, d: DeviceModel, maxRows: number): Generator<Batch> {
  const a = d.allocations;
  const entries = d.trace.length;
  const streams = src.snapshot.traceColumns.streams;
  const blockSize = src.snapshot.tables.blocks.size;
  const {
    freeRequested: requested,
    end: ended,
    start: started,
    block: blockOf,
    stream: streamOf,
    stack: stackOf,
  } = a;
  const inWindow = (e: number): number => (e >= 0 && e < entries ? e : Number.NaN);
  const size = Math.min(maxRows, a.count);
  const columns = Array.from({ length: 6 }, () => reused(Float64Array, size));
  const stateOf = reused(Int32Array, size);
  return batched(a.count, maxRows, (from, n) => {
    const c = columns.map((column) => column(n));
    const [block, start, freeRequested, end, stream, stack] = c as [Float64Array, ...Float64Array[]];
    const state = stateOf(n);
    for (let i = 0; i < n; i++) {
      const id = from + i;
      const r = requested[id]!;
      const e = ended[id]!;
      state[i] = e < entries ? 2 : r >= 0 || r === FREED_BEFORE_WINDOW ? 1 : 0;
      const b = blockOf[id]!;
      block![i] = b >= 0 ? blockSize[b]! : Number.NaN;
      start![i] = inWindow(started[id]!);
      freeRequested![i] = inWindow(r);
      end![i] = inWindow(e);
      stream![i] = streams[streamOf[id]!]!;
      const st = stackOf[id]!;
      stack![i] = st < 0 ? Number.NaN : st;
    }
    return [
      constant(src.id),
      constant(d.device),
      counting(from),
      a.addr.subarray(from, from + n),
      a.size.subarray(from, from + n),
      block!,
      { codes: state, dictionary: ALLOCATION_STATES },
      start!,
      freeRequested!,
      end!,
      stream!,
      stack!,
    ];
  });
}

/** Whether the first `n` values are all the same; a plain loop (TypedArray.every took ~0.1 s on 7.5M). */
function isConstant(values: Uint16Array, n: number): boolean {
  const first = values[0];
  for (let i = 1; i < n; i++) if (values[i] !== first) return false;
  return true;
}

/**
 * An array for a column that each batch fills anew, allocated once at the largest batch's size and
 * lent as its first `n` values: fresh arrays for each batch cost a page fault every 4 KB (~0.2 GB
 * of them in the 1 GB synthetic file's export), and their garbage collection.
 */
function reused<T extends Float64Array | Int32Array>(
  type: { new (size: number): T },
  size: number,
): (n: number) => T {
  let array: T | undefined;
  return (n) => {
    array ??= new type(size);
    return array.subarray(0, n) as T;
  };
}

function* batched(
  total: number,
  maxRows: number,
  make: (from: number, n: number) => Column[],
): Generator<Batch> {
  for (let from = 0; from < total; from += maxRows) {
    const n = Math.min(maxRows, total - from);
    yield { rows: n, columns: make(from, n) };
  }
}

/** Builds a small table row by row: one array per column, turned into columns at the end. */
function rowsOf(
  types: readonly ('n' | 't')[],
  fill: (push: (...row: (number | string | null)[]) => void) => void,
): Batch {
  const values: (number | string | null)[][] = types.map(() => []);
  let rows = 0;
  fill((...row) => {
    for (const [i, v] of row.entries()) values[i]!.push(v);
    rows++;
  });
  const columns = values.map((v, i) =>
    types[i] === 't' ? text(v as (string | null)[]) : Float64Array.from(v as (number | null)[], orNaN),
  );
  return { rows, columns };
}

function snapshotRows(src: ExportSource): Batch {
  const s = src.snapshot;
  return rowsOf(['n', 'n', 't', 't', 'n', 't', 'n', 'n', 'n', 'n', 'n'], (push) => {
    for (const d of s.devices) {
      const start = d.totals.start;
      push(
        src.id,
        d.device,
        src.file,
        src.kind,
        src.lastStep,
        s.layout,
        s.protocol ?? null,
        d.trace.length,
        start.allocated,
        start.active,
        start.reserved,
      );
    }
  });
}

function segmentRows(src: ExportSource): Batch {
  const s = src.snapshot;
  return rowsOf(['n', 'n', 'n', 'n', 'n', 'n', 't', 't', 'n', 'n', 'n'], (push) => {
    for (const d of s.devices) {
      for (const id of d.segmentIds) {
        const seg = s.tables.segments[id]!;
        push(
          src.id,
          d.device,
          id,
          seg.address,
          seg.totalSize,
          seg.stream,
          seg.pool,
          seg.poolId.join(','),
          seg.expandable ? 1 : 0,
          seg.blockCount,
          seg.stack < 0 ? null : seg.stack,
        );
      }
    }
  });
}

const BLOCK_STATE_NAMES: Record<BlockState, string> = {
  [BlockState.allocated]: 'active_allocated',
  [BlockState.pendingFree]: 'active_pending_free',
  [BlockState.inactive]: 'inactive',
  [BlockState.unknown]: 'unknown',
  [BlockState.workspace]: 'workspace',
};

function blockRows(src: ExportSource): Batch {
  const s = src.snapshot;
  const b = s.tables.blocks;
  return rowsOf(['n', 'n', 'n', 'n', 'n', 'n', 't', 'n'], (push) => {
    for (const d of s.devices) {
      for (const id of d.segmentIds) {
        const seg = s.tables.segments[id]!;
        for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
          const state = b.state[k] as BlockState;
          push(
            src.id,
            d.device,
            id,
            b.address[k]!,
            b.size[k]!,
            b.requestedSize[k]!,
            BLOCK_STATE_NAMES[state] ?? 'unknown',
            b.stack[k]! < 0 ? null : b.stack[k]!,
          );
        }
      }
    }
  });
}

function frameRows(src: ExportSource): Batch {
  const stacks = src.snapshot.stacks;
  return rowsOf(['n', 'n', 't', 't', 'n', 't'], (push) => {
    for (let id = 0; id < stacks.frameCount; id++) {
      const f = stacks.frame(id);
      push(src.id, id, f.name, f.filename, f.line, formatFrame(f, { fullPath: true }));
    }
  });
}

function stackRows(src: ExportSource): Batch {
  const stacks = src.snapshot.stacks;
  return rowsOf(['n', 'n', 'n', 'n', 'n'], (push) => {
    for (let id = 0; id < stacks.stackCount; id++) {
      const frames = stacks.frames(id);
      // The innermost user frame's first place: a recursive stack holds the same frame again.
      const user = frames.indexOf(topUserFrame(frames)!);
      const ids = stacks.stack(id);
      for (let depth = 0; depth < ids.length; depth++) {
        push(src.id, id, depth, ids[depth]!, depth === user ? 1 : 0);
      }
    }
  });
}

function annotationRows(src: ExportSource): Batch {
  return rowsOf(['n', 'n', 'n', 't', 't', 'n'], (push) => {
    src.snapshot.annotations.forEach((a, i) => {
      push(src.id, a.device, i, a.name, a.stage, a.timeUs);
    });
  });
}
