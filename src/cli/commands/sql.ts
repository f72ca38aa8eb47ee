import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { SnapshotError } from '../../engine/base/index.js';
import { SCHEMA_VERSION } from '../../engine/export/index.js';
import { csvCell } from '../../engine/views/tables/index.js';
import { cacheRoot, contentHash } from '../../node/cache/result-cache.js';
import { isStaleTemp } from '../../node/cache/stale-temp.js';
import { openDuckDb, plainValue } from '../../node/export/duckdb.js';
import {
  checkManifest,
  type ExportManifest,
  exportTables,
  MANIFEST,
  readManifest,
} from '../../node/export/export-tables.js';
import { sqlFileList, sqlIdentifier } from '../../node/export/sql-quote.js';
import { expandPaths } from '../../node/files/expand-paths.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import { VERSION } from '../../node/version.js';

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

/**
 * The export directory for `paths`: the directory itself when it is one, else the cached export
 * of those files ($XDG_CACHE_HOME/memlens/parquet/<hash of their contents and places>), made now
 * if it is not there yet. A cache that cannot be written (read-only, not a directory) is done
 * without: the export goes to a scratch directory, removed after the query.
 */
async function exportedDir(paths: string[]): Promise<{ dir: string; scratch: boolean }> {
  if (paths.length === 1 && readManifest(paths[0]!)) return { dir: paths[0]!, scratch: false };
  const { files, runs } = expandPaths(paths);
  // The memlens version too: a figure a later release computes differently must not be read
  // back from an export an earlier one cached. And the run folders given: the same files named
  // one by one have no step or rank, so their export is another one.
  const key = createHash('sha256').update(`schema ${SCHEMA_VERSION}\nmemlens ${VERSION}\n`);
  for (const r of runs) key.update(`run ${path.resolve(r.root)}\n`);
  for (const file of files) {
    const hash = await contentHash(file).catch((e: NodeJS.ErrnoException) => {
      throw new SnapshotError(`${file}: cannot read (${e.code ?? e.message})`);
    });
    key.update(`${path.resolve(file)}\u0000${hash}\n`);
  }
  const root = path.join(cacheRoot(), 'parquet');
  const dir = path.join(root, key.digest('hex').slice(0, 32));
  if (readManifest(dir)) {
    touch(path.join(dir, MANIFEST));
  } else {
    const unwritable = cacheProblem(root);
    if (unwritable) {
      process.stderr.write(
        `memlens: ${root}: cannot write the cache (${unwritable}); exporting for this query only\n`,
      );
      const scratch = mkdtempSync(path.join(tmpdir(), 'memlens-sql-'));
      const out = path.join(scratch, 'export');
      await exportTables(paths, out, 'parquet', { force: false, progress: true }).catch((e: unknown) => {
        rmSync(scratch, { recursive: true, force: true });
        throw e;
      });
      return { dir: out, scratch: true };
    }
    await exportTables(paths, dir, 'parquet', { force: true, progress: true });
  }
  trimCache(root, dir);
  return { dir, scratch: false };
}

/** Why the cache directory cannot be written (its error code), or undefined if it can. */
function cacheProblem(root: string): string | undefined {
  try {
    mkdirSync(root, { recursive: true });
    accessSync(root, constants.W_OK);
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

/** The cached exports together stay under this; the least recently queried go first. */
const CACHE_MAX_BYTES = 4 * 1024 ** 3;

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // An unwritable cache only loses its recency order.
  }
}

function trimCache(root: string, keep: string): void {
  try {
    const names = readdirSync(root);
    // An export killed or out of disk leaves its .tmp folder: removed once its process is gone.
    for (const name of names) {
      const st = statSync(path.join(root, name), { throwIfNoEntry: false });
      if (st && isStaleTemp(name, st.mtimeMs))
        rmSync(path.join(root, name), { recursive: true, force: true });
    }
    const entries = names
      .map((name) => path.join(root, name))
      .filter((dir) => dir !== keep && readManifest(dir))
      .map((dir) => ({ dir, used: statSync(path.join(dir, MANIFEST)).mtimeMs, bytes: treeBytes(dir) }))
      .sort((a, b) => b.used - a.used);
    let total = treeBytes(keep);
    for (const e of entries) {
      total += e.bytes;
      if (total > CACHE_MAX_BYTES) rmSync(e.dir, { recursive: true, force: true });
    }
  } catch {
    // As in touch: trimming is best effort, never the query's error.
  }
}

function treeBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? treeBytes(p) : statSync(p).size;
  }
  return total;
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
