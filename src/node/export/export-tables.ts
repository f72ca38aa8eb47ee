import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { SnapshotError } from '../../engine/base/index.js';
import {
  type Batch,
  type ExportSource,
  SCHEMA_VERSION,
  TABLE_NAMES,
  TABLES,
  type TableName,
  tableBatches,
} from '../../engine/export/index.js';
import type { RunCell } from '../../engine/run-layout/index.js';
import { type ExpandedPaths, expandPaths } from '../files/expand-paths.js';
import { openSnapshot } from '../files/open-snapshot.js';
import { openDuckDb } from './duckdb.js';
import { checkOutputApart, checkReplaceable } from './export-output.js';
import { writeParquetBatch } from './parquet-writer.js';
import { writeTextBatch } from './text-table-writer.js';

const FORMATS = ['parquet', 'csv', 'jsonl'] as const;
export type TableFormat = (typeof FORMATS)[number];

/** What an export directory holds, written last as memlens-export.json (`memlens sql` reads it). */
export interface ExportManifest {
  schema_version: number;
  format: TableFormat;
  /** Hive partitions step=<first step>/rank=<rank>/ under each table (runs and several files). */
  partitioned: boolean;
  tables: TableName[];
  snapshots: {
    snapshot: number;
    file: string;
    step: number | null;
    rank: number | null;
    kind: string | null;
  }[];
}

export const MANIFEST = 'memlens-export.json';
/** Hive's (and DuckDB's, Spark's) directory name for a null partition value. */
const NULL_PARTITION = '__HIVE_DEFAULT_PARTITION__';

/**
 * Throws unless `m`, read from `dir`'s manifest, is one an export writes: its table names become
 * SQL and its folder may be replaced by --force, so nothing in it is trusted before this.
 */
export function checkManifest(dir: string, m: ExportManifest): void {
  const problem = manifestProblem(m);
  if (problem)
    throw new SnapshotError(`${path.join(dir, MANIFEST)}: not a memlens export manifest (${problem})`);
}

function manifestProblem(m: ExportManifest): string | undefined {
  if (typeof m !== 'object' || m === null) return 'not an object';
  if (!Number.isInteger(m.schema_version)) return 'no schema_version';
  if (!(FORMATS as readonly unknown[]).includes(m.format)) return `unknown format ${quoteShort(m.format)}`;
  if (typeof m.partitioned !== 'boolean') return 'partitioned is not true or false';
  if (!Array.isArray(m.tables) || !Array.isArray(m.snapshots)) return 'no tables or snapshots list';
  const unknown = m.tables.find((t) => !(TABLE_NAMES as unknown[]).includes(t));
  if (unknown !== undefined) return `unknown table ${quoteShort(unknown)}`;
  if (new Set(m.tables).size !== m.tables.length) return 'a table named twice';
  return undefined;
}

/** A value from a file, shown in one line of an error. */
function quoteShort(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function readManifest(dir: string): ExportManifest | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, MANIFEST), 'utf8')) as ExportManifest;
  } catch {
    return undefined;
  }
}

/**
 * Exports snapshot files and run directories as one set of tables under `outDir`. Everything is
 * written to a temporary directory beside it and renamed into place when complete, so a failure
 * leaves no half export; a non-empty `outDir` is replaced only with `force`.
 */
export async function exportTables(
  args: string[],
  outDir: string,
  format: TableFormat,
  opts: {
    force: boolean;
    progress: boolean;
    /** `args` already expanded (and what was left out said) by the caller: a folder is scanned once. */
    expanded?: ExpandedPaths;
  },
): Promise<ExportManifest> {
  const { files, runs } = opts.expanded ?? expandPaths(args);
  checkOutputApart(outDir, [...args, ...files]);
  checkReplaceable(outDir, opts.force, isExport);
  const cells = new Map<string, RunCell>();
  for (const r of runs) for (const c of r.run.cells) cells.set(c.path, c);
  const manifest: ExportManifest = {
    schema_version: SCHEMA_VERSION,
    format,
    partitioned: runs.length > 0 || files.length > 1,
    tables: TABLE_NAMES,
    snapshots: [],
  };
  const tmp = `${outDir.replace(/[/\\]+$/, '')}.memlens-${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  // Parquet batches are staged in the system's temporary directory, not beside the output (which
  // may be a slow or network file system): files of a batch's raw columns, gone once read.
  const staging = format === 'parquet' ? mkdtempSync(path.join(tmpdir(), 'memlens-stage-')) : undefined;
  const releaseSignals = removeOnSignal([tmp, ...(staging ? [staging] : [])]);
  // One DuckDB thread: the two connections' COPYs run side by side on the threads that wait on them.
  const db = format === 'parquet' ? await openDuckDb({ threads: 1 }) : undefined;
  const writers = db && staging ? new ParquetWriters([db.con, await db.connect()], staging) : undefined;
  try {
    for (const [id, file] of files.entries()) {
      const cell = cells.get(file);
      const entry = {
        snapshot: id,
        file,
        step: cell?.steps?.first ?? null,
        rank: cell?.rank ?? null,
        kind: cell?.kind ?? null,
      };
      manifest.snapshots.push(entry);
      const snapshot = await openSnapshot(file, { progress: opts.progress }).catch((e: unknown) => {
        throw new SnapshotError(`${file}: ${(e as Error).message}`);
      });
      const src: ExportSource = { snapshot, id, file, kind: entry.kind, lastStep: cell?.steps?.last ?? null };
      for (const table of TABLE_NAMES) {
        const dir = path.join(tmp, table, ...(manifest.partitioned ? partition(entry) : []));
        mkdirSync(dir, { recursive: true });
        let k = 0;
        for (const batch of tableBatches(table, src)) {
          const out = path.join(dir, `part-${id}-${k++}.${format}`);
          if (writers) await writers.write(table, batch, out);
          else writeTextBatch(TABLES[table], batch, format as 'csv' | 'jsonl', out);
        }
      }
    }
    await writers?.finish();
    writeFileSync(path.join(tmp, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
    if (existsSync(outDir)) rmSync(outDir, { recursive: true, force: true });
    renameSync(tmp, outDir);
    return manifest;
  } catch (e) {
    await writers?.finish().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  } finally {
    db?.close();
    if (staging) rmSync(staging, { recursive: true, force: true });
    releaseSignals();
  }
}

/**
 * Writes Parquet batches on two connections in turn, so DuckDB compresses and writes one batch
 * (its COPY runs on DuckDB's threads) while JavaScript stages the next on the other connection.
 */
class ParquetWriters {
  private readonly pending: (Promise<void> | undefined)[];
  private turn = 0;

  constructor(
    private readonly cons: DuckDBConnection[],
    private readonly staging: string,
  ) {
    this.pending = cons.map(() => undefined);
  }

  /** Resolves once the batch is handed over (its connection free again), not once it is written. */
  async write(table: TableName, batch: Batch, file: string): Promise<void> {
    const k = this.turn++ % this.cons.length;
    await this.pending[k];
    // A new name for each batch: DuckDB caches what it read of a file by name and modification
    // time, so reusing one name within a second read a previous batch's columns (seen).
    const stage = path.join(this.staging, `batch-${this.turn}.parquet`);
    const written = writeParquetBatch(this.cons[k]!, table, TABLES[table], batch, file, stage);
    // Observed by the next write on this connection or by finish; never an unhandled rejection.
    written.catch(() => {});
    this.pending[k] = written;
  }

  async finish(): Promise<void> {
    const all = [...this.pending];
    this.pending.fill(undefined);
    for (const p of all) await p;
  }
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Ctrl+C (or a TERM or HUP) during an export removes its temporary directories, then dies of the
 * signal as it would have. The export awaits DuckDB between batches, so the handler runs within a
 * batch's time; a SIGKILL still leaves the `.tmp` directory, never a half OUTDIR.
 */
function removeOnSignal(dirs: string[]): () => void {
  const handler = (signal: NodeJS.Signals) => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    release();
    process.kill(process.pid, signal);
  };
  const release = () => {
    for (const s of SIGNALS) process.removeListener(s, handler);
  };
  for (const s of SIGNALS) process.on(s, handler);
  return release;
}

function partition(e: { step: number | null; rank: number | null }): string[] {
  const value = (v: number | null) => (v === null ? NULL_PARTITION : String(v));
  return [`step=${value(e.step)}`, `rank=${value(e.rank)}`];
}

/** A folder an export wrote: a manifest that checkManifest accepts. */
function isExport(dir: string): boolean {
  const m = readManifest(dir);
  if (m === undefined) return false;
  try {
    checkManifest(dir, m);
    return true;
  } catch {
    return false;
  }
}
