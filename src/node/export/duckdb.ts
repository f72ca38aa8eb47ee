import { createRequire } from 'node:module';
import type * as NodeApi from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';

// Loaded as CommonJS, which it is: an ESM import has Node scan the package's ~60 re-exported
// files for their export names first (cjs-module-lexer), ~0.1-0.15 s of every export and sql.
const { DuckDBInstance } = createRequire(import.meta.url)('@duckdb/node-api') as typeof NodeApi;

/**
 * An embedded, in-memory DuckDB for export and `memlens sql`. Its memory is bounded below the
 * machine's (DuckDB's default is 80% of RAM, on top of a loaded snapshot) and it never loads an
 * extension from the network: Parquet, JSON and CSV are built in.
 */
export interface DuckDb {
  con: DuckDBConnection;
  /** Another connection to the same database (its own temporary tables, its own queries in flight). */
  connect(): Promise<DuckDBConnection>;
  close(): void;
}

/**
 * `threads`: DuckDB's worker threads (default: one a core). The export runs one statement per
 * connection on two connections, each executed by the thread that waits on it; with worker
 * threads as well, the waiting threads spin on the task queue: a COPY to Parquet cost 2.2 s of
 * CPU with 2 threads and 1.4 s with 1, for the same or less wall time (2 cores, measured).
 */
export async function openDuckDb(opts: { threads?: number } = {}): Promise<DuckDb> {
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: '2GB',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // DuckDB keeps what it read of files in memory for another read; the export reads each staging
    // file once (keeping them cost ~0.45 GB of peak RSS on the 1 GB trace), and sql reads tables
    // from the page cache as fast.
    enable_external_file_cache: 'false',
    ...(opts.threads === undefined ? {} : { threads: String(opts.threads) }),
  });
  const connections = [await instance.connect()];
  return {
    con: connections[0]!,
    connect: async () => {
      const con = await instance.connect();
      connections.push(con);
      return con;
    },
    close: () => {
      for (const con of connections) con.closeSync();
      instance.closeSync();
    },
  };
}

/** A DuckDB value as plain JSON: integers as numbers where exact, else as text. */
export function plainValue(v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : v.toString();
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  return String(v);
}
