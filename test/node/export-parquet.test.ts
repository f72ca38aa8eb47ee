import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, TABLE_NAMES, TABLES } from '../../src/engine/export/schema.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

/**
 * Every corpus file exported to Parquet in one run (a partitioned export, one snapshot id per
 * file) and read back through DuckDB: the dump-time figures and trace peaks equal summary --json
 * for every file, and the events rows equal `events --format json` for a few files of different
 * eras (each file exported alone, unpartitioned). hyparquet, a second reader, reads the files too.
 */
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const CORPUS = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS)
  ? readdirSync(CORPUS)
      .filter((f) => f.endsWith('.pickle'))
      .map((f) => join(CORPUS, f))
  : [];
/** Files whose rows are compared one by one: annotations, OOM, a dump-only file, a long trace. */
const ROW_FILES = [
  'THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle',
  'Yiyi_LLM-inference__oom_snapshot__61261a2.pickle',
  'ZidongLiu_DeComFL__memory__edd30e0.pickle',
  'silmont2000_assignment2__memory_forward_fp32_128.pickle',
].map((f) => join(CORPUS, f));

const work = mkdtempSync(join(tmpdir(), 'memlens-export-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const MiB = 2 ** 20;

function memlens(...args: string[]): string {
  return execFileSync('node', [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', maxBuffer: 512 * MiB });
}

async function query<T>(sql: string): Promise<T[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  try {
    const reader = await con.runAndReadAll(sql);
    return reader
      .getRowObjectsJS()
      .map((r) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])),
      ) as T[];
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}

const tableGlob = (dir: string, table: string) =>
  `read_parquet('${dir}/${table}/**/*.parquet', hive_partitioning = false)`;

interface SummaryDevice {
  device: number;
  segments: number;
  blocks: number;
  reserved_bytes: number;
  allocated_bytes: number;
  active_bytes: number;
  requested_bytes: number;
  trace_entries: number;
  trace_peak_allocated_bytes: number;
  trace_peak_reserved_bytes: number;
}

describe.skipIf(files.length === 0)('memlens export --format parquet on the corpus', () => {
  const all = join(work, 'all');
  beforeAll(() => {
    memlens('export', ...files, '-o', all);
  }, 120_000);

  it('gives every file the dump-time figures and trace peaks of summary --json', async () => {
    const summary = JSON.parse(memlens('summary', ...files, '--json')) as {
      files: { file: string; devices: SummaryDevice[] }[];
    };
    const dir = all;
    const got = await query<SummaryDevice & { file: string }>(`
      WITH seg AS (SELECT snapshot, device, count(*) segments, sum(total_size) reserved_bytes
                   FROM ${tableGlob(dir, 'segments')} GROUP BY ALL),
           blk AS (SELECT snapshot, device, count(*) blocks,
                     coalesce(sum(size) FILTER (WHERE state = 'active_allocated'), 0) allocated_bytes,
                     coalesce(sum(size) FILTER (WHERE state IN ('active_allocated', 'active_pending_free')), 0) active_bytes,
                     coalesce(sum(requested_size) FILTER (WHERE state IN ('active_allocated', 'active_pending_free')), 0) requested_bytes
                   FROM ${tableGlob(dir, 'blocks')} GROUP BY ALL),
           ev AS (SELECT snapshot, device, max(allocated_after) a, max(reserved_after) r
                  FROM ${tableGlob(dir, 'events')} GROUP BY ALL)
      SELECT s.file, s.device, coalesce(seg.segments, 0) segments, coalesce(blk.blocks, 0) blocks,
             coalesce(seg.reserved_bytes, 0) reserved_bytes, coalesce(blk.allocated_bytes, 0) allocated_bytes,
             coalesce(blk.active_bytes, 0) active_bytes, coalesce(blk.requested_bytes, 0) requested_bytes,
             s.trace_entries,
             greatest(s.allocated_before_trace, coalesce(ev.a, 0)) trace_peak_allocated_bytes,
             greatest(s.reserved_before_trace, coalesce(ev.r, 0)) trace_peak_reserved_bytes
      FROM ${tableGlob(dir, 'snapshots')} s
      LEFT JOIN seg USING (snapshot, device) LEFT JOIN blk USING (snapshot, device) LEFT JOIN ev USING (snapshot, device)
      ORDER BY s.snapshot, s.device`);
    const expected = summary.files.flatMap((f) =>
      f.devices.map((d) => ({
        file: f.file,
        device: d.device,
        segments: d.segments,
        blocks: d.blocks,
        reserved_bytes: d.reserved_bytes,
        allocated_bytes: d.allocated_bytes,
        active_bytes: d.active_bytes,
        requested_bytes: d.requested_bytes,
        trace_entries: d.trace_entries,
        trace_peak_allocated_bytes: d.trace_peak_allocated_bytes,
        trace_peak_reserved_bytes: d.trace_peak_reserved_bytes,
      })),
    );
    expect(got).toEqual(expected);
  });

  it('writes every table with the schema types and the schema version in the file metadata', async () => {
    const types = await query<{ name: string; type: string; converted_type: string }>(
      `SELECT name, type, converted_type FROM parquet_schema('${all}/events/*/*/part-0-0.parquet')`,
    );
    const byName = Object.fromEntries(types.map((t) => [t.name, `${t.type} ${t.converted_type}`]));
    expect(byName).toMatchObject({
      address: 'INT64 UINT_64',
      stream: 'INT64 UINT_64',
      size: 'INT64 INT_64',
      allocated_after: 'INT64 INT_64',
      action: 'BYTE_ARRAY UTF8',
    });
    const codecs = await query<{ c: string }>(
      `SELECT DISTINCT compression c FROM parquet_metadata('${all}/events/*/*/*.parquet')`,
    );
    expect(codecs).toEqual([{ c: 'ZSTD' }]);
    const described = await query<{ column_name: string; column_type: string }>(
      `DESCRIBE SELECT * FROM ${tableGlob(all, 'events')}`,
    );
    const logical = Object.fromEntries(described.map((r) => [r.column_name, r.column_type]));
    expect(logical).toMatchObject({
      address: 'UBIGINT',
      stream: 'UBIGINT',
      size: 'BIGINT',
      time_us: 'BIGINT',
      reserved_after: 'BIGINT',
    });
    for (const table of TABLE_NAMES) {
      const meta = await query<{ key: string; value: string; file_name: string }>(
        `SELECT decode(key) AS key, decode(value) AS value, file_name FROM parquet_kv_metadata('${all}/${table}/**/*.parquet')`,
      );
      const versions = meta.filter((m) => m.key === 'memlens_schema_version');
      expect(versions.length, table).toBe(files.length);
      expect(new Set(versions.map((v) => v.value))).toEqual(new Set([String(SCHEMA_VERSION)]));
      const cols = await query<{ column_name: string }>(`DESCRIBE SELECT * FROM ${tableGlob(all, table)}`);
      expect(cols.map((c) => c.column_name)).toEqual(TABLES[table].map((c) => c.name));
    }
  });

  for (const file of ROW_FILES) {
    it(`gives the rows of events --format json: ${file.split('/').at(-1)}`, async () => {
      const dir = join(work, file.split('/').at(-1)!);
      memlens('export', file, '-o', dir);
      const json = JSON.parse(memlens('events', file, '--format', 'json')) as {
        files: { devices: { device: number; rows: Record<string, unknown>[] }[] }[];
      };
      const expected = json.files[0]!.devices.flatMap((d) =>
        d.rows.map((r): Record<string, unknown> => ({ device: d.device, ...r })),
      );
      const got = await query<Record<string, unknown>>(`
        SELECT e.device, e.entry id, e.action, e.address, e.size, e.stream, e.time_us,
               e.allocated_after allocated_bytes, e.active_after active_bytes, e.reserved_after reserved_bytes,
               coalesce(f.label, '') frame
        FROM '${dir}/events/*.parquet' e
        LEFT JOIN '${dir}/stacks/*.parquet' s ON s.stack_id = e.stack_id AND s.is_user_frame
        LEFT JOIN '${dir}/frames/*.parquet' f ON f.frame_id = s.frame_id
        ORDER BY e.device, e.entry`);
      expect(got.length).toBe(expected.length);
      expect(got).toEqual(expected);

      // A second reader, written independently of DuckDB, reads the same events file.
      const parts = readdirSync(join(dir, 'events')).sort((a, b) =>
        a.localeCompare(b, 'en', { numeric: true }),
      );
      const rows: Record<string, unknown>[] = [];
      for (const part of parts) {
        const buffer = await asyncBufferFromFile(join(dir, 'events', part));
        const metadata = await parquetMetadataAsync(buffer);
        expect(metadata.key_value_metadata).toContainEqual({
          key: 'memlens_schema_version',
          value: String(SCHEMA_VERSION),
        });
        rows.push(
          ...((await parquetReadObjects({ file: buffer, compressors })) as Record<string, unknown>[]),
        );
      }
      const plain = rows.map((r) => ({
        device: r.device,
        id: Number(r.entry),
        action: r.action,
        address: r.address === null ? null : Number(r.address),
        size: r.size === null ? null : Number(r.size),
        allocated_bytes: Number(r.allocated_after),
      }));
      expect(plain).toEqual(
        expected.map((r) => ({
          device: r.device,
          id: r.id,
          action: r.action,
          address: r.address,
          size: r.size,
          allocated_bytes: r.allocated_bytes,
        })),
      );
    }, 60_000);
  }
});
