import { SnapshotError } from '../base/errors.js';
import { describeValue, jsonText, type PyDict } from '../values/py-values.js';
import { NO_STACK } from './stack-table.js';

/** Trace actions with fixed codes; unknown action strings get codes from UNKNOWN_ACTION_BASE up. */
export enum Action {
  alloc = 0,
  free_requested = 1,
  free_completed = 2,
  segment_alloc = 3,
  segment_free = 4,
  segment_map = 5,
  segment_unmap = 6,
  snapshot = 7,
  oom = 8,
  annotate = 9,
  free = 10,
  /** torch_npu >= 7.1: a workspace block at dump time (NPUWorkspaceAllocator::get_trace). */
  workspace_snapshot = 11,
}
export const KNOWN_ACTIONS = [
  'alloc',
  'free_requested',
  'free_completed',
  'segment_alloc',
  'segment_free',
  'segment_map',
  'segment_unmap',
  'snapshot',
  'oom',
  'annotate',
  'free',
  'workspace_snapshot',
] as const;
const MAX_ACTIONS = 255;

/** Trace entry keys with a column of their own. `frames` is the decoder's (stack ids). */
export enum Field {
  action = 0,
  addr = 1,
  size = 2,
  stream = 3,
  time_us = 4,
  compile_context = 5,
  user_metadata = 6,
  device_free = 7,
  pool_id = 8,
  frames = 9,
  other = 10,
}
const FIELDS = new Map<string, Field>([
  ['action', Field.action],
  ['addr', Field.addr],
  ['size', Field.size],
  ['stream', Field.stream],
  ['time_us', Field.time_us],
  ['compile_context', Field.compile_context],
  ['user_metadata', Field.user_metadata],
  ['device_free', Field.device_free],
  ['pool_id', Field.pool_id],
  ['frames', Field.frames],
]);

export function fieldOf(key: string): Field {
  return FIELDS.get(key) ?? Field.other;
}
const MAX_SPARSE = (1 << 24) - 2; // a JS Map holds at most 2^24 entries

/**
 * Trace entries as columns, filled while decoding (one row per entry dict, in file order) so a
 * 10M-entry trace never exists as 10M objects. Which rows belong to which device's trace list is
 * kept by the decoder (`RowList`); the model cuts per-device views out of these columns.
 */
export class TraceColumns {
  length = 0;
  action = new Uint8Array(0);
  addr = new Float64Array(0);
  size = new Float64Array(0);
  /** Index into `streams`: raw cudaStream_t values are 48-bit pointers, remapped while decoding. */
  stream = new Uint16Array(0);
  timeUs = new Float64Array(0);
  stack = new Int32Array(0);
  /** Allocated on first use: many files have none of these keys on any entry. */
  compileContext: Int32Array | undefined;
  userMetadata: Int32Array | undefined;
  poolId: Int32Array | undefined;
  deviceFree: Float64Array | undefined;
  readonly streams: number[] = [0];
  readonly actionNames: string[] = [...KNOWN_ACTIONS];
  readonly texts: string[] = [];
  readonly pools: (readonly [number, number])[] = [];
  /** Keys memlens does not model, kept so nothing in the file is silently dropped. */
  readonly extras = new Map<number, PyDict>();
  /** Rows whose action the model recoded (workspace.ts), with the action the file wrote. */
  readonly writtenAs = new Map<number, Action>();
  private readonly actionIndex = new Map<string, number>(KNOWN_ACTIONS.map((a, i) => [a, i]));
  private readonly textIndex = new Map<string, number>();
  private readonly poolIndex = new Map<string, number>();
  private readonly streamIndex = new Map<number, number>([[0, 0]]);
  // One-value caches: consecutive entries repeat the same action and text objects.
  private lastAction: unknown = undefined;
  private lastActionCode = 0;
  private readonly lastText: unknown[] = [undefined, undefined];
  private readonly lastTextId = [0, 0];
  private lastStream = 0;
  private lastStreamId = 0;
  private capacity = 0;

  constructor(initialCapacity = 1024) {
    this.resize(Math.max(16, initialCapacity));
  }

  begin(): number {
    const row = this.length;
    if (row === this.capacity) this.resize(this.capacity * 2);
    this.length = row + 1;
    this.addr[row] = Number.NaN;
    this.size[row] = Number.NaN;
    this.timeUs[row] = Number.NaN;
    this.stack[row] = NO_STACK;
    this.stream[row] = 0;
    this.action[row] = 255;
    this.clearOptional(row, row + 1);
    return row;
  }

  /**
   * begin() for n rows at once (the decoder's runs): returns the first. `written`: the caller
   * writes action, addr, size, stream, time_us and stack of every row itself; `optionalWritten`:
   * the bits (1 << Field) of the optional fields it writes too.
   */
  beginRows(n: number, written = false, optionalWritten = 0): number {
    const row = this.length;
    let capacity = this.capacity;
    while (row + n > capacity) capacity *= 2;
    if (capacity !== this.capacity) this.resize(capacity);
    const end = row + n;
    this.length = end;
    this.clearOptional(row, end, optionalWritten);
    if (written) return row;
    this.addr.fill(Number.NaN, row, end);
    this.size.fill(Number.NaN, row, end);
    this.timeUs.fill(Number.NaN, row, end);
    this.stack.fill(NO_STACK, row, end);
    this.stream.fill(0, row, end);
    this.action.fill(255, row, end);
    return row;
  }

  set(row: number, key: string, value: unknown): void {
    this.setField(row, fieldOf(key), key, value);
  }

  /** A numeric value for a known field: no boxing, no string switch (the decoder's hot path). */
  setNumber(row: number, field: Field, key: string, n: number): void {
    if (!Number.isInteger(n)) {
      this.setField(row, field, key, n);
      return;
    }
    switch (field) {
      case Field.addr:
        this.addr[row] = n;
        return;
      case Field.size:
        this.size[row] = n;
        return;
      case Field.time_us:
        this.timeUs[row] = n;
        return;
      case Field.stream:
        this.stream[row] = this.streamCode(n);
        return;
      default:
        this.setField(row, field, key, n);
    }
  }

  setField(row: number, field: Field, key: string, value: unknown): void {
    switch (field) {
      case Field.action:
        this.action[row] = this.actionCode(value, row);
        return;
      case Field.addr:
        this.addr[row] = exactInt(value, row, key);
        return;
      case Field.size:
        this.size[row] = exactInt(value, row, key);
        return;
      case Field.stream:
        this.stream[row] = this.streamCode(exactInt(value, row, key));
        return;
      case Field.time_us:
        this.timeUs[row] = exactInt(value, row, key);
        return;
      case Field.compile_context:
        this.textColumn(field)[row] = this.textOf(value, 0);
        return;
      case Field.user_metadata:
        this.textColumn(field)[row] = this.textOf(value, 1);
        return;
      case Field.device_free:
        this.deviceFree ??= this.floatColumn(Number.NaN);
        this.deviceFree[row] = exactInt(value, row, key);
        return;
      case Field.pool_id:
        this.poolId ??= this.intColumn(-1);
        this.poolId[row] = this.poolCode(value, row);
        return;
      default:
        this.setExtra(row, key, value);
    }
  }

  /**
   * The code a text field (action, compile_context, user_metadata) stores for `text`, interned
   * if new: the decoder's runs set whole columns of codes (see textColumn).
   */
  textCode(field: Field, text: string): number {
    return field === Field.action ? this.actionCode(text, this.length) : this.text(text);
  }

  /** The column of a text field, made on first use. */
  textColumn(field: Field): Uint8Array | Int32Array {
    if (field === Field.action) return this.action;
    if (field === Field.compile_context) return (this.compileContext ??= this.intColumn(-1));
    if (field === Field.user_metadata) return (this.userMetadata ??= this.intColumn(-1));
    throw new Error(`${Field[field]} is not a text field`);
  }

  actionName(row: number): string {
    return this.actionNames[this.action[row]!] ?? 'missing';
  }

  /** text() with a one-value cache per column (`which`): entries repeat the same strings. */
  private textOf(value: unknown, which: 0 | 1): number {
    if (value === this.lastText[which]) return this.lastTextId[which]!;
    const id = this.text(value);
    if (typeof value === 'string') {
      this.lastText[which] = value;
      this.lastTextId[which] = id;
    }
    return id;
  }

  text(value: unknown): number {
    const s = typeof value === 'string' ? value : jsonText(value);
    let id = this.textIndex.get(s);
    if (id === undefined) {
      id = this.texts.length;
      this.texts.push(s);
      this.textIndex.set(s, id);
    }
    return id;
  }

  private actionCode(value: unknown, row: number): number {
    if (value === this.lastAction) return this.lastActionCode;
    if (typeof value !== 'string') {
      throw new SnapshotError(`trace entry ${row}: 'action' is ${describeValue(value)}, expected a str`);
    }
    let code = this.actionIndex.get(value);
    if (code === undefined) {
      code = this.actionNames.length;
      if (code >= MAX_ACTIONS) throw new SnapshotError(`more than ${MAX_ACTIONS} distinct trace actions`);
      this.actionNames.push(value);
      this.actionIndex.set(value, code);
    }
    this.lastAction = value;
    this.lastActionCode = code;
    return code;
  }

  private poolCode(value: unknown, row: number): number {
    if (!Array.isArray(value) || value.length !== 2) {
      throw new SnapshotError(
        `trace entry ${row}: 'pool_id' is ${describeValue(value)}, expected (int, int)`,
      );
    }
    const a = exactInt(value[0], row, 'pool_id');
    const b = exactInt(value[1], row, 'pool_id');
    const key = `${a},${b}`;
    let code = this.poolIndex.get(key);
    if (code === undefined) {
      code = this.pools.length;
      this.pools.push([a, b]);
      this.poolIndex.set(key, code);
    }
    return code;
  }

  private setExtra(row: number, key: string, value: unknown): void {
    let extra = this.extras.get(row);
    if (extra === undefined) {
      if (this.extras.size >= MAX_SPARSE) {
        throw new SnapshotError(`too many trace entries with unknown keys (e.g. '${key}')`);
      }
      extra = Object.create(null) as PyDict;
      this.extras.set(row, extra);
    }
    extra[key] = value;
  }

  /** The small id of a raw stream value, interning it if the trace has not used it. */
  streamCode(raw: number): number {
    if (raw === this.lastStream) return this.lastStreamId;
    let id = this.streamIndex.get(raw);
    if (id === undefined) {
      id = this.streams.length;
      if (id > 0xffff) throw new SnapshotError('more than 65535 distinct streams in the trace');
      this.streams.push(raw);
      this.streamIndex.set(raw, id);
    }
    this.lastStream = raw;
    this.lastStreamId = id;
    return id;
  }

  /**
   * Optional columns hold their "absent" value for rows begun so far only: rows are cleared as
   * they are begun, so the capacity guessed from the file size (often twice the rows) is never
   * written, nor paged in.
   */
  private intColumn(fill: number): Int32Array {
    return new Int32Array(this.capacity).fill(fill, 0, this.length);
  }

  private floatColumn(fill: number): Float64Array {
    return new Float64Array(this.capacity).fill(fill, 0, this.length);
  }

  private clearOptional(from: number, to: number, skip = 0): void {
    if (!(skip & (1 << Field.compile_context))) this.compileContext?.fill(-1, from, to);
    if (!(skip & (1 << Field.user_metadata))) this.userMetadata?.fill(-1, from, to);
    if (!(skip & (1 << Field.device_free))) this.deviceFree?.fill(Number.NaN, from, to);
    if (!(skip & (1 << Field.pool_id))) this.poolId?.fill(-1, from, to);
  }

  private resize(capacity: number): void {
    this.capacity = capacity;
    this.action = resized(this.action, capacity);
    this.addr = resized(this.addr, capacity);
    this.size = resized(this.size, capacity);
    this.stream = resized(this.stream, capacity);
    this.timeUs = resized(this.timeUs, capacity);
    this.stack = resized(this.stack, capacity);
    if (this.compileContext) this.compileContext = resized(this.compileContext, capacity);
    if (this.userMetadata) this.userMetadata = resized(this.userMetadata, capacity);
    if (this.deviceFree) this.deviceFree = resized(this.deviceFree, capacity);
    if (this.poolId) this.poolId = resized(this.poolId, capacity);
  }
}

type Column = Uint8Array | Uint16Array | Int32Array | Float64Array;

function resized<T extends Column>(a: T, capacity: number): T {
  const b = new (a.constructor as new (n: number) => T)(capacity);
  b.set(a.length <= capacity ? a : a.subarray(0, capacity));
  return b;
}

/** Byte counts, addresses, streams and times must be exact: a float64 holds ints up to 2^53. */
export function exactInt(value: unknown, row: number, key: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const what = typeof value === 'bigint' ? `the int ${value}, beyond 2^53` : describeValue(value);
  throw new SnapshotError(`trace entry ${row}: '${key}' is ${what}, expected an exact int`);
}
