import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { SnapshotError } from '../../engine/base/index.js';
import { SCHEMA_VERSION } from '../../engine/export/index.js';
import { csvCell } from '../../engine/views/tables/index.js';
import { openDuckDb, plainValue } from '../../node/export/duckdb.js';
import {
  checkManifest,
  type ExportManifest,
  MANIFEST,
  readManifest,
} from '../../node/export/export-tables.js';
import { sqlFileList, sqlIdentifier } from '../../node/export/sql-quote.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import { exportedDir } from './sql-cache.js';

type SqlFormat = 'table' | 'csv' | 'json';

/** `memlens sql`: a query over the export tables of snapshots, runs or an export directory. */
export function sqlCommand(program: Command): void {
  program
    .command('sql')
    .description(
      'run a DuckDB SQL query over the tables of memlens export (snapshots, segments, blocks, events, allocations, frames, stacks, annotations; see docs/sql.md)',
    )
    .argument('<query>', 'the SQL query')
    .argument(
      '<paths...>',
      'an export directory, or snapshot files / run directories (exported on first use into the cache directory)',
    )
    .option('--format <fmt>', 'table, csv or json (an array of row objects)', parseFormat, 'table')
    .option('--json', 'the same as --format json')
    .action(async (query: string, paths: string[], opts: { format: SqlFormat; json?: boolean }) => {
      if (opts.json) opts.format = 'json';
      try {
        const { dir, scratch } = await exportedDir(paths);
        const db = await openDuckDb();
        try {
          const manifest = readManifest(dir)!;
          await createViews(db.con, dir, manifest);
          const reader = await db.con.runAndReadAll(query).catch((e: unknown) => {
            throw new SnapshotError(`sql: ${(e as Error).message.split('\n')[0]}`);
          });
          const columns = reader.columnNames();
          const rows = reader.getRowsJS().map((r) => r.map(plainValue));
          process.stdout.write(formatRows(columns, rows, opts.format));
        } finally {
          db.close();
          if (scratch) rmSync(path.dirname(dir), { recursive: true, force: true });
        }
      } catch (e) {
        process.stderr.write(`memlens: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}\n`);
        process.exitCode = EXIT_BAD_INPUT;
      }
    });
}

async function createViews(con: DuckDBConnection, dir: string, m: ExportManifest): Promise<void> {
  checkManifest(dir, m);
  // Views assume this memlens's tables and columns: an export of another schema would answer
  // with missing or differently meant columns, so it is refused rather than read.
  if (m.schema_version !== SCHEMA_VERSION) {
    throw new SnapshotError(
      `${path.join(dir, MANIFEST)}: an export of schema ${m.schema_version}; this memlens reads schema ${SCHEMA_VERSION} (export the snapshots again)`,
    );
  }
  if (m.format !== 'parquet') {
    throw new SnapshotError(`${dir}: memlens sql reads Parquet exports; this one is ${m.format}`);
  }
  const hive = m.partitioned
    ? ", hive_partitioning = true, hive_types = {'step': BIGINT, 'rank': BIGINT}"
    : '';
  for (const table of m.tables) {
    const files = parquetFiles(path.join(dir, table));
    if (files.length === 0) throw new SnapshotError(`${path.join(dir, table)}: no Parquet files`);
    await con.run(
      `CREATE VIEW ${sqlIdentifier(table)} AS SELECT * FROM read_parquet(${sqlFileList(files)}${hive})`,
    );
  }
}

/** The table's files, listed here rather than globbed by DuckDB: a path is a name, never a pattern. */
function parquetFiles(tableDir: string): string[] {
  try {
    return readdirSync(tableDir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.parquet'))
      .map((e) => path.join(e.parentPath, e.name))
      .sort();
  } catch (e) {
    throw new SnapshotError(`${tableDir}: cannot read (${(e as NodeJS.ErrnoException).code})`);
  }
}

type Value = ReturnType<typeof plainValue>;

export function formatRows(columns: string[], rows: Value[][], format: SqlFormat): string {
  if (format === 'json') {
    const objects = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
    return `${JSON.stringify(objects, null, 1)}\n`;
  }
  if (format === 'csv') {
    const lines = [
      columns.map(csvCell),
      ...rows.map((r) => r.map((v) => csvCell(typeof v === 'boolean' ? String(v) : v))),
    ];
    return `${lines.map((l) => l.join(',')).join('\n')}\n`;
  }
  const cells = rows.map((r) => r.map((v) => (v === null ? 'NULL' : String(v))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const numeric = columns.map((_, i) => rows.every((r) => r[i] === null || typeof r[i] === 'number'));
  const line = (r: string[]) =>
    r
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return `${[line(columns), rule, ...cells.map(line)].join('\n')}\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`;
}

function parseFormat(v: string): SqlFormat {
  if (v !== 'table' && v !== 'csv' && v !== 'json')
    throw new InvalidArgumentError('expected table, csv or json');
  return v;
}
