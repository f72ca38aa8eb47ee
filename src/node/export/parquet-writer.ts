import { rmSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  type Batch,
  type ColumnSpec,
  DEFAULT_BATCH_ROWS,
  isSeries,
  isText,
  SCHEMA_VERSION,
  type TableName,
  type TextColumn,
} from '../../engine/export/index.js';
import { VERSION } from '../version.js';
import { type StagedColumn, writePlainParquet } from './plain-parquet.js';
import { isPlainLiteral, sqlFileList, sqlIdentifier, sqlString } from './sql-quote.js';

/**
 * Row groups of 262,144 rows, four a full part (DuckDB's default is 122,880): the 1 GB synthetic
 * file's export takes 31.3 MB (33.2 MB at the default; 30.3 MB at a whole part a group, which held
 * ~0.6 GB more memory while writing). The COPY also tries no dictionary for number columns
 * (DICTIONARY_SIZE_LIMIT 1): their values are mostly distinct, and building one to give it up
 * cost ~20% of the COPY's CPU for no smaller file.
 */
const ROW_GROUP_ROWS = DEFAULT_BATCH_ROWS / 4;
/** Text columns with at most this many distinct values travel as codes and are looked up in SQL. */
const CODED_TEXT = 256;

/**
 * Writes one batch of an export table as a zstd Parquet file through DuckDB: the batch's columns
 * are staged as a plain, uncompressed Parquet file (their bytes as they are: measured several
 * times cheaper than DuckDB's appender), then COPY reads it, casts to the schema's types (byte
 * counts INT64, addresses UINT64) and writes the file with the schema version in its key-value
 * metadata. A column that is a rule (one value, or a count) is SQL, not staged. The staging file
 * (`stage`, removed once read) is written before the first await, so the batch's arrays are free
 * once this returns its promise.
 */
export async function writeParquetBatch(
  con: DuckDBConnection,
  table: TableName,
  specs: readonly ColumnSpec[],
  batch: Batch,
  file: string,
  stage: string,
): Promise<void> {
  const staged: StagedColumn[] = [];
  const select = specs.map((spec, i) => {
    const c = batch.columns[i]!;
    const coded = isText(c) && c.dictionary.length <= CODED_TEXT ? c : undefined;
    let value: string;
    if (isSeries(c)) {
      value = c.step === 0 ? literal(c.first) : `(${c.first} + file_row_number)`;
    } else {
      value = `c${i}`;
      staged.push(stagedColumn(value, c, coded !== undefined));
    }
    // Only a column holding NaN needs it turned into NULL (a compare and a select per value).
    const nullable = isSeries(c) ? Number.isNaN(c.first) : !isText(c) && hasNaN(c);
    return `${finalValue(spec, value, coded, nullable)} AS ${sqlIdentifier(spec.name)}`;
  });
  try {
    writePlainParquet(stage, batch.rows, staged);
    const metadata = `{memlens_schema_version: ${sqlString(String(SCHEMA_VERSION))}, memlens_table: ${sqlString(table)}, memlens_version: ${sqlString(VERSION)}}`;
    await con.run(
      `COPY (SELECT ${select.join(', ')} FROM read_parquet(${sqlFileList([stage])}, file_row_number = true)) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_ROWS}, DICTIONARY_SIZE_LIMIT 1, KV_METADATA ${metadata})`,
    );
  } finally {
    rmSync(stage, { force: true });
  }
}

/** Numbers are staged as doubles, NaN for null (turned into NULL by the COPY); coded text as its codes. */
function stagedColumn(name: string, c: Float64Array | TextColumn, coded: boolean): StagedColumn {
  if (!isText(c)) return { name, kind: 'double', values: c };
  if (coded) return { name, kind: 'int32', values: c.codes };
  return {
    name,
    kind: 'text',
    values: Array.from(c.codes, (code) => (code < 0 ? null : c.dictionary[code]!)),
  };
}

function literal(v: number): string {
  return Number.isNaN(v) ? "'NaN'::DOUBLE" : `${v}::DOUBLE`;
}

/**
 * Whether the column holds NaN (or an infinity, which no column holds: its cast fails either way).
 * x * 0 is 0 for every finite x, so four running sums of it stay 0 unless one is NaN: ~3x faster
 * than a compare and branch a value on the ~80M values of the 1 GB synthetic file's export.
 */
function hasNaN(c: Float64Array): boolean {
  let [s0, s1, s2, s3] = [0, 0, 0, 0];
  const whole = c.length - (c.length % 4);
  for (let i = 0; i < whole; i += 4) {
    s0 += c[i]! * 0;
    s1 += c[i + 1]! * 0;
    s2 += c[i + 2]! * 0;
    s3 += c[i + 3]! * 0;
  }
  for (let i = whole; i < c.length; i++) s0 += c[i]! * 0;
  return s0 + s1 + s2 + s3 !== 0;
}

/** The SQL that turns a staged column (or a literal) into the schema's type. */
function finalValue(
  spec: ColumnSpec,
  name: string,
  coded: TextColumn | undefined,
  nullable: boolean,
): string {
  const number = nullable ? `nullif(${name}, 'NaN'::DOUBLE)` : name;
  switch (spec.type) {
    case 'int64':
      return `${number}::BIGINT`;
    case 'uint64':
      return `${number}::UBIGINT`;
    case 'int32':
      return `${number}::INTEGER`;
    case 'bool':
      return `(${number} = 1)`;
    case 'text': {
      if (!coded) return name;
      // DuckDB lists are 1-based; code -1 (null) indexes position 0, which is NULL. Distinct values
      // go out as an ENUM, which DuckDB writes as a dictionary-coded UTF-8 column (read back as
      // VARCHAR) without hashing each row's text: the events' action, ~0.7 s CPU less on 1 GB.
      // The list is cast to the ENUM once (a constant), so rows pick an ENUM value by index, not
      // a string that is then looked up: 13-18% less CPU in the events' and allocations' COPYs.
      const values = coded.dictionary.map(sqlString).join(', ');
      const n = coded.dictionary.length;
      // An ENUM's values must be plain literals: a dictionary with a NUL goes out as a looked-up list.
      const distinct =
        n > 0 && new Set(coded.dictionary).size === n && coded.dictionary.every(isPlainLiteral);
      if (!distinct) return `[${values}][${name} + 1]::VARCHAR`;
      return `([${values}]::ENUM(${values})[])[${name} + 1]`;
    }
  }
}
