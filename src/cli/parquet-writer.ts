import {
  BOOLEAN,
  DOUBLE,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBType,
  type DuckDBVector,
  INTEGER,
  VARCHAR,
} from '@duckdb/node-api';
import { type ColumnSpec, SCHEMA_VERSION, type TableName } from '../engine/analyses/export/schema.js';
import { type Batch, type Column, isText, type TextColumn } from '../engine/analyses/export/table-rows.js';
import { sqlString } from './duckdb.js';
import { VERSION } from './version.js';

/** DuckDB's vector size: the most rows one data chunk holds. */
const CHUNK_ROWS = 2048;
/** Text columns with at most this many distinct values travel as codes and are looked up in SQL. */
const CODED_TEXT = 256;

/**
 * Writes one batch of an export table as a zstd Parquet file through DuckDB: the batch's columns
 * go into a staging table by data chunks (measured faster than DuckDB scanning a JS table
 * function), then COPY casts them to the schema's types (byte counts INT64, addresses UINT64)
 * and writes the file with the schema version in its key-value metadata.
 */
export async function writeParquetBatch(
  con: DuckDBConnection,
  table: TableName,
  specs: readonly ColumnSpec[],
  batch: Batch,
  file: string,
): Promise<void> {
  const coded = batch.columns.map((c) => isText(c) && c.dictionary.length <= CODED_TEXT);
  // A column with one value throughout (snapshot, device) goes into the SQL as a literal, not staged.
  const constant = batch.columns.map((c, i) =>
    isText(c) || specs[i]!.type === 'bool' || batch.rows === 0 ? undefined : constantOf(c),
  );
  const staged = specs.map((_, i) => i).filter((i) => constant[i] === undefined);
  const types = staged.map((i) => stagingType(specs[i]!, coded[i]!));
  await con.run(
    `CREATE OR REPLACE TEMP TABLE stage (${staged.map((i, k) => `c${i} ${types[k]!.toString()}`).join(', ')})`,
  );
  const appender = await con.createAppender('stage');
  // One chunk reused while full: its vectors keep their buffers, and appending copies the rows.
  let chunk = DuckDBDataChunk.create(types, CHUNK_ROWS);
  for (let from = 0; from < batch.rows; from += CHUNK_ROWS) {
    const n = Math.min(CHUNK_ROWS, batch.rows - from);
    if (n < CHUNK_ROWS) chunk = DuckDBDataChunk.create(types, n);
    for (const [k, i] of staged.entries()) {
      fillVector(chunk.getColumnVector(k), batch.columns[i]!, specs[i]!, coded[i]!, from, n);
    }
    appender.appendDataChunk(chunk);
  }
  appender.closeSync();
  const select = specs.map((s, i) => {
    const value = constant[i] !== undefined ? literal(constant[i]!) : `c${i}`;
    return `${finalValue(s, value, coded[i] ? (batch.columns[i] as TextColumn) : undefined)} AS "${s.name}"`;
  });
  const metadata = `{memlens_schema_version: '${SCHEMA_VERSION}', memlens_table: '${table}', memlens_version: '${VERSION}'}`;
  await con.run(
    `COPY (SELECT ${select.join(', ')} FROM stage) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd, KV_METADATA ${metadata})`,
  );
  await con.run('DROP TABLE stage');
}

/**
 * Numbers are staged as doubles, NaN for null (turned into NULL by the COPY), so a column goes
 * into the vector's own typed array in one copy where the vector exposes it (DuckDB's node API
 * keeps it as `items`; setItem per value costs most of an export's time otherwise).
 */
function fillVector(
  vector: DuckDBVector,
  column: Column,
  spec: ColumnSpec,
  coded: boolean,
  from: number,
  n: number,
): void {
  const items = (vector as unknown as { items?: unknown }).items;
  if (!isText(column) && spec.type !== 'bool' && items instanceof Float64Array && items.length >= n) {
    items.set(column.subarray(from, from + n));
  } else if (isText(column) && coded && items instanceof Int32Array && items.length >= n) {
    items.set(column.codes.subarray(from, from + n));
  } else if (spec.type === 'bool' && !isText(column)) {
    for (let i = 0; i < n; i++)
      vector.setItem(i, Number.isNaN(column[from + i]!) ? null : column[from + i] === 1);
  } else if (!isText(column)) {
    for (let i = 0; i < n; i++) vector.setItem(i, column[from + i]!);
  } else if (coded) {
    for (let i = 0; i < n; i++) vector.setItem(i, column.codes[from + i]!);
  } else {
    for (let i = 0; i < n; i++) vector.setItem(i, textAt(column, from + i));
  }
  vector.flush();
}

function constantOf(c: Float64Array): number | undefined {
  const v = c[0]!;
  if (Number.isNaN(v)) return c.every(Number.isNaN) ? v : undefined;
  for (let i = 1; i < c.length; i++) if (c[i] !== v) return undefined;
  return v;
}

function literal(v: number): string {
  return Number.isNaN(v) ? "'NaN'::DOUBLE" : `${v}::DOUBLE`;
}

function stagingType(spec: ColumnSpec, coded: boolean): DuckDBType {
  if (spec.type === 'text') return coded ? INTEGER : VARCHAR;
  if (spec.type === 'bool') return BOOLEAN;
  return DOUBLE;
}

function textAt(c: TextColumn, row: number): string | null {
  const code = c.codes[row]!;
  return code < 0 ? null : c.dictionary[code]!;
}

/** The SQL that turns a staged column into the schema's type. */
function finalValue(spec: ColumnSpec, name: string, coded: TextColumn | undefined): string {
  switch (spec.type) {
    case 'int64':
      return `nullif(${name}, 'NaN'::DOUBLE)::BIGINT`;
    case 'uint64':
      return `nullif(${name}, 'NaN'::DOUBLE)::UBIGINT`;
    case 'int32':
      return `nullif(${name}, 'NaN'::DOUBLE)::INTEGER`;
    case 'bool':
      return name;
    case 'text':
      // DuckDB lists are 1-based; code -1 (null) indexes position 0, which is NULL.
      return coded ? `[${coded.dictionary.map(sqlString).join(', ')}][${name} + 1]::VARCHAR` : name;
  }
}
