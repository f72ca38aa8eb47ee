/** The engine's export layer's front door: what code outside the engine may use of it. */

export type { PerfettoCounters } from './perfetto.js';
export { DEFAULT_COUNTER_POINTS, POINTS_PER_BUCKET, perfettoTrace } from './perfetto.js';
export type { ColumnSpec, TableName } from './schema.js';
export { SCHEMA_VERSION, TABLE_NAMES, TABLES } from './schema.js';
export { liveMemoryProfile } from './speedscope.js';
export type { Batch, ExportSource, TextColumn } from './table-rows.js';
export { DEFAULT_BATCH_ROWS, isSeries, isText, numberAt, tableBatches } from './table-rows.js';
