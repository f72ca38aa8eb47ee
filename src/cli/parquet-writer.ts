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
  const types = specs.map((s, i) => stagingType(s, coded[i]!));
  await con.run(
    `CREATE OR REPLACE TEMP TABLE stage (${types.map((t, i) => `c${i} ${t.toString()}`).join(', ')})`,
  );
  const appender = await con.createAppender('stage');
  for (let from = 0; from < batch.rows; from += CHUNK_ROWS) {
    const n = Math.min(CHUNK_ROWS, batch.rows - from);
    const chunk = DuckDBDataChunk.create(types, n);
    for (const [c, column] of batch.columns.entries()) {
      fillVector(chunk.getColumnVector(c), column, specs[c]!, coded[c]!, from, n);
    }
    appender.appendDataChunk(chunk);
  }
  appender.closeSync();
  const select = specs.map(
    (s, i) =>
      `${finalValue(s, `c${i}`, coded[i] ? (batch.columns[i] as TextColumn) : undefined)} AS "${s.name}"`,
  );
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
