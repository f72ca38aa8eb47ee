import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { TABLES } from '../../src/engine/export/schema.js';
import { tableBatches } from '../../src/engine/export/table-rows.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { openDuckDb, plainValue } from '../../src/node/export/duckdb.js';
import { writeParquetBatch } from '../../src/node/export/parquet-writer.js';
import { type StagedColumn, writePlainParquet } from '../../src/node/export/plain-parquet.js';

/**
 * The staging Parquet files the export hands DuckDB (plain, uncompressed, written by memlens
 * itself) read back the same through DuckDB and through hyparquet: doubles with NaN, int32 codes,
 * text with nulls and non-ASCII, more columns than the compact protocol's short list header
 * holds, runs of nulls longer than a varint byte, and no rows at all. And the tables written
 * through them in several parts: a part after the first counts its entries and allocations on
 * from where the one before it ended (the ids are SQL, not staged), and its totals are the model's.
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

describe('writeParquetBatch over several parts', () => {
  it("entries and allocation ids count on across parts; totals and sizes are the model's", async () => {
    const snapshot = loadSnapshotBytes(generateSnapshotBytes({ events: 5000, seed: 3 }).bytes);
    const src = { snapshot, id: 7, file: 'generated.pickle', kind: null, lastStep: null };
    const db = await openDuckDb({ threads: 1 });
    try {
      for (const table of ['events', 'allocations'] as const) {
        let k = 0;
        for (const batch of tableBatches(table, src, 1000)) {
          const out = join(work, `${table}-${k}.parquet`);
          await writeParquetBatch(
            db.con,
            table,
            TABLES[table],
            batch,
            out,
            join(work, `stage-${table}-${k++}`),
          );
        }
        expect(k).toBeGreaterThan(1);
      }
      const d = snapshot.devices[0]!;
      const events = await db.con.runAndReadAll(
        `SELECT snapshot, device, entry, size, allocated_after, reserved_after FROM read_parquet('${work}/events-*.parquet') ORDER BY entry`,
      );
      const rows = events.getRows().map((r) => r.map(plainValue));
      expect(rows.map((r) => r[2])).toEqual(Array.from({ length: d.trace.length }, (_, i) => i));
      expect(rows.every((r) => r[0] === 7 && r[1] === d.device)).toBe(true);
      expect(rows.map((r) => r[3])).toEqual(
        Array.from(d.trace.size.subarray(0, d.trace.length), (v) => (Number.isNaN(v) ? null : v)),
      );
      expect(rows.map((r) => r[4])).toEqual(Array.from(d.totals.allocated));
      expect(rows.map((r) => r[5])).toEqual(Array.from(d.totals.reserved));
      const ids = await db.con.runAndReadAll(
        `SELECT allocation, size FROM read_parquet('${work}/allocations-*.parquet') ORDER BY allocation`,
      );
      const a = d.allocations;
      expect(ids.getRows().map((r) => plainValue(r[0]))).toEqual(
        Array.from({ length: a.count }, (_, i) => i),
      );
      expect(ids.getRows().map((r) => plainValue(r[1]))).toEqual(Array.from(a.size.subarray(0, a.count)));
    } finally {
      db.close();
    }
  });
});

describe('writeParquetBatch and NaN', () => {
  it('a NaN in any position of a number column is NULL, wherever it falls in the check', async () => {
    const db = await openDuckDb({ threads: 1 });
    try {
      // 1003 rows: positions 0-999 in four lanes of four, 1000-1002 after them.
      for (const at of [0, 1, 2, 3, 501, 1000, 1002]) {
        const rows = 1003;
        const size = Float64Array.from({ length: rows }, (_, i) => (i === at ? Number.NaN : i * 8));
        const batch = {
          rows,
          columns: TABLES.blocks.map((spec, i) =>
            spec.type === 'text'
              ? { codes: new Int32Array(rows), dictionary: ['active_allocated'] }
              : i === 4
                ? size
                : new Float64Array(rows).fill(i),
          ),
        };
        const out = join(work, `nan-${at}.parquet`);
        await writeParquetBatch(db.con, 'blocks', TABLES.blocks, batch, out, join(work, `nan-stage-${at}`));
        const read = await db.con.runAndReadAll(`SELECT size FROM read_parquet('${out}')`);
        expect(read.getRows().map((r) => plainValue(r[0]))).toEqual(
          Array.from(size, (v) => (Number.isNaN(v) ? null : v)),
        );
      }
    } finally {
      db.close();
    }
  });
});
