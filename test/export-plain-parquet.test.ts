import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb, plainValue } from '../src/cli/duckdb.js';
import { type StagedColumn, writePlainParquet } from '../src/cli/plain-parquet.js';

/**
 * The staging Parquet files the export hands DuckDB (plain, uncompressed, written by memlens
 * itself) read back the same through DuckDB and through hyparquet: doubles with NaN, int32 codes,
 * text with nulls and non-ASCII, more columns than the compact protocol's short list header
 * holds, runs of nulls longer than a varint byte, and no rows at all.
 */
const work = mkdtempSync(join(tmpdir(), 'memlens-plain-parquet-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function sampleColumns(rows: number): StagedColumn[] {
  const columns: StagedColumn[] = [
    {
      name: 'd',
      kind: 'double',
      values: Float64Array.from({ length: rows }, (_, i) => (i % 7 === 3 ? Number.NaN : i * 2 ** 40 + 0.5)),
    },
    { name: 'code', kind: 'int32', values: Int32Array.from({ length: rows }, (_, i) => (i % 5) - 1) },
    {
      name: 'label',
      kind: 'text',
      values: Array.from({ length: rows }, (_, i) => (i % 300 < 200 ? null : `frame ü ${i}`)),
    },
  ];
  // 17 more: a schema list of 21 elements takes the compact protocol's long list header.
  for (let k = 0; k < 17; k++) {
    columns.push({
      name: `x${k}`,
      kind: 'double',
      values: Float64Array.from({ length: rows }, (_, i) => i + k),
    });
  }
  return columns;
}

function expected(columns: StagedColumn[], rows: number): Record<string, unknown>[] {
  return Array.from({ length: rows }, (_, r) =>
    Object.fromEntries(
      columns.map((c) => {
        const v = c.values[r];
        return [c.name, typeof v === 'number' && Number.isNaN(v) ? 'NaN' : (v ?? null)];
      }),
    ),
  );
}

describe('writePlainParquet', () => {
  for (const rows of [1000, 0]) {
    it(`${rows} rows read back the same by DuckDB and hyparquet`, async () => {
      const columns = sampleColumns(rows);
      const file = join(work, `sample-${rows}.parquet`);
      writePlainParquet(file, rows, columns);
      const want = expected(columns, rows);

      const db = await openDuckDb();
      try {
        const reader = await db.con.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
        expect(reader.columnNames()).toEqual(columns.map((c) => c.name));
        const got = reader
          .getRowObjects()
          .map((row) =>
            Object.fromEntries(
              Object.entries(row).map(([k, v]) => [
                k,
                typeof v === 'number' && Number.isNaN(v) ? 'NaN' : plainValue(v),
              ]),
            ),
          );
        expect(got).toEqual(want);
      } finally {
        db.close();
      }

      const objects = (await parquetReadObjects({ file: await asyncBufferFromFile(file) })) as Record<
        string,
        unknown
      >[];
      expect(
        objects.map((row) =>
          Object.fromEntries(
            Object.entries(row).map(([k, v]) => [k, typeof v === 'number' && Number.isNaN(v) ? 'NaN' : v]),
          ),
        ),
      ).toEqual(want);
    });
  }
});
