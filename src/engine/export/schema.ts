/**
 * The open tables memlens exports (Parquet, CSV, JSON lines): names, columns and column types,
 * documented in docs/parquet-schema.md. Queries written against these names run unchanged in
 * DuckDB, Spark or Trino, so renaming or retyping a column is a new SCHEMA_VERSION.
 */
export const SCHEMA_VERSION = 1;

/**
 * int64: byte counts, entries, times; uint64: addresses and raw cudaStream_t values; int32: ids;
 * text; bool. Every number travels as a double (exact below 2^53, which addresses and µs times are).
 */
export type ColumnType = 'int64' | 'uint64' | 'int32' | 'text' | 'bool';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
}

export type TableName =
  | 'snapshots'
  | 'segments'
  | 'blocks'
  | 'events'
  | 'allocations'
  | 'frames'
  | 'stacks'
  | 'annotations';

const col = (name: string, type: ColumnType): ColumnSpec => ({ name, type });
const SNAPSHOT = col('snapshot', 'int32');
const DEVICE = col('device', 'int32');

export const TABLES: Readonly<Record<TableName, readonly ColumnSpec[]>> = {
  snapshots: [
    SNAPSHOT,
    DEVICE,
    col('file', 'text'),
    col('kind', 'text'),
    col('last_step', 'int64'),
    col('layout', 'text'),
    col('pickle_protocol', 'int32'),
    col('trace_entries', 'int64'),
    col('allocated_before_trace', 'int64'),
    col('active_before_trace', 'int64'),
    col('reserved_before_trace', 'int64'),
  ],
  segments: [
    SNAPSHOT,
    DEVICE,
    col('segment', 'int32'),
    col('address', 'uint64'),
    col('total_size', 'int64'),
    col('stream', 'uint64'),
    col('pool', 'text'),
    col('pool_id', 'text'),
    col('is_expandable', 'bool'),
    col('block_count', 'int32'),
    col('stack_id', 'int32'),
  ],
  blocks: [
    SNAPSHOT,
    DEVICE,
    col('segment', 'int32'),
    col('address', 'uint64'),
    col('size', 'int64'),
    col('requested_size', 'int64'),
    col('state', 'text'),
    col('stack_id', 'int32'),
  ],
  events: [
    SNAPSHOT,
    DEVICE,
    col('entry', 'int64'),
    col('action', 'text'),
    col('address', 'uint64'),
    col('size', 'int64'),
    col('stream', 'uint64'),
    col('time_us', 'int64'),
    col('allocated_after', 'int64'),
    col('active_after', 'int64'),
    col('reserved_after', 'int64'),
    col('stack_id', 'int32'),
    col('device_free', 'int64'),
  ],
  allocations: [
    SNAPSHOT,
    DEVICE,
    col('allocation', 'int64'),
    col('address', 'uint64'),
    col('size', 'int64'),
    col('block_size', 'int64'),
    col('state', 'text'),
    col('alloc_entry', 'int64'),
    col('free_requested_entry', 'int64'),
    col('free_completed_entry', 'int64'),
    col('stream', 'uint64'),
    col('stack_id', 'int32'),
  ],
  frames: [
    SNAPSHOT,
    col('frame_id', 'int32'),
    col('name', 'text'),
    col('filename', 'text'),
    col('line', 'int64'),
    col('label', 'text'),
  ],
  stacks: [
    SNAPSHOT,
    col('stack_id', 'int32'),
    col('depth', 'int32'),
    col('frame_id', 'int32'),
    col('is_user_frame', 'bool'),
  ],
  annotations: [
    SNAPSHOT,
    DEVICE,
    col('annotation', 'int32'),
    col('name', 'text'),
    col('stage', 'text'),
    col('time_us', 'int64'),
  ],
};

export const TABLE_NAMES = Object.keys(TABLES) as TableName[];
