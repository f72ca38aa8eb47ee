import type { RowList } from './row-list.js';
import type { TraceColumns } from './trace-columns.js';

/**
 * One device's trace entries, oldest first, as column views. Columns alias the decoder's
 * storage when the device's entries are consecutive rows (the normal case): no copy.
 */
export interface DeviceTrace {
  length: number;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Uint16Array;
  timeUs: Float64Array;
  stack: Int32Array;
  compileContext: Int32Array | undefined;
  userMetadata: Int32Array | undefined;
  poolId: Int32Array | undefined;
  deviceFree: Float64Array | undefined;
  /** Row of entry i in the shared columns (for `TraceColumns.extras`). */
  rowOf(i: number): number;
}

type View = Uint8Array | Uint16Array | Int32Array | Float64Array;

export function deviceTrace(cols: TraceColumns, rows: RowList | undefined): DeviceTrace {
  const n = rows?.count ?? 0;
  const list = rows?.rows ?? null;
  const first = rows?.first ?? 0;
  const cut = <T extends View>(c: T): T =>
    list === null ? (c.subarray(first, first + n) as T) : gather(c, list, n);
  const opt = <T extends View>(c: T | undefined): T | undefined => (c === undefined ? undefined : cut(c));
  return {
    length: n,
    action: cut(cols.action),
    addr: cut(cols.addr),
    size: cut(cols.size),
    stream: cut(cols.stream),
    timeUs: cut(cols.timeUs),
    stack: cut(cols.stack),
    compileContext: opt(cols.compileContext),
    userMetadata: opt(cols.userMetadata),
    poolId: opt(cols.poolId),
    deviceFree: opt(cols.deviceFree),
    rowOf: list === null ? (i) => first + i : (i) => list[i]!,
  };
}

function gather<T extends View>(c: T, rows: Int32Array, n: number): T {
  const out = new (c.constructor as new (n: number) => T)(n);
  for (let i = 0; i < n; i++) out[i] = c[rows[i]!]!;
  return out;
}
