import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import { BlockState } from '../../model/segments.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { formatFrame } from '../frames/short-path.js';
import { topUserFrame } from '../frames/user-frames.js';
import { TABLES, type TableName } from './schema.js';

/**
 * The export tables' rows as column batches (schema.ts gives names and types): plain typed arrays
 * a writer hands on in bulk, never an object per row, so a 10M-entry trace streams out in batches
 * of bounded size. Numbers are doubles with NaN for null; text is dictionary-coded (code -1: null).
 */
export interface TextColumn {
  codes: Int32Array;
  dictionary: readonly string[];
}

export type Column = Float64Array | TextColumn;

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
  return !(c instanceof Float64Array);
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

const filled = (n: number, v: number): Float64Array => new Float64Array(n).fill(v);
const known = (v: number | null | undefined): number => (v === null || v === undefined ? Number.NaN : v);
const text = (values: readonly (string | null)[]): TextColumn => ({
  codes: Int32Array.from(values, (v, i) => (v === null ? -1 : i)),
  dictionary: values.map((v) => v ?? ''),
});

function eventBatches(src: ExportSource, d: DeviceModel, maxRows: number): Generator<Batch> {
  const cols = src.snapshot.traceColumns;
  // Entries without an action (a malformed file) read 'missing', as the events table prints them.
  const dictionary = [...cols.actionNames, 'missing'];
  const streams = cols.streams;
  const t = d.trace;
  const totals = d.totals;
  return batched(t.length, maxRows, (from, n) => {
    const to = from + n;
    const entry = new Float64Array(n);
    const codes = new Int32Array(n);
    const stream = new Float64Array(n);
    const stack = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      entry[i] = from + i;
      const a = t.action[from + i]!;
      codes[i] = a < cols.actionNames.length ? a : dictionary.length - 1;
      stream[i] = streams[t.stream[from + i]!]!;
      const st = t.stack[from + i]!;
      stack[i] = st < 0 ? Number.NaN : st;
    }
    return [
      filled(n, src.id),
      filled(n, d.device),
      entry,
      { codes, dictionary },
      t.addr.slice(from, to),
      t.size.slice(from, to),
      stream,
      t.timeUs.slice(from, to),
      totals.allocated.slice(from, to),
      totals.active.slice(from, to),
      totals.reserved.slice(from, to),
      stack,
      t.deviceFree ? t.deviceFree.slice(from, to) : filled(n, Number.NaN),
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
  const inWindow = (e: number): number => (e >= 0 && e < entries ? e : Number.NaN);
  return batched(a.count, maxRows, (from, n) => {
    const c = Array.from({ length: 9 }, () => new Float64Array(n));
    const state = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const id = from + i;
      const freed = a.freeRequested[id]! >= 0 || a.freeRequested[id] === FREED_BEFORE_WINDOW;
      state[i] = a.end[id]! < entries ? 2 : freed ? 1 : 0;
      c[0]![i] = id;
      c[1]![i] = a.addr[id]!;
      c[2]![i] = a.size[id]!;
      c[3]![i] = a.block[id]! >= 0 ? blockSize[a.block[id]!]! : Number.NaN;
      c[4]![i] = inWindow(a.start[id]!);
      c[5]![i] = inWindow(a.freeRequested[id]!);
      c[6]![i] = inWindow(a.end[id]!);
      c[7]![i] = streams[a.stream[id]!]!;
      c[8]![i] = a.stack[id]! < 0 ? Number.NaN : a.stack[id]!;
    }
    const [id, addr, size, block, start, freeRequested, end, stream, stack] = c as [
      Float64Array,
      ...Float64Array[],
    ];
    return [
      filled(n, src.id),
      filled(n, d.device),
      id,
      addr!,
      size!,
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
    types[i] === 't' ? text(v as (string | null)[]) : Float64Array.from(v as (number | null)[], known),
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
