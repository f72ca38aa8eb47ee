/**
 * Where `memlens sql` finds the export it queries: the directory given, or the cached export of
 * the snapshots and runs given ($XDG_CACHE_HOME/memlens/parquet/<key>), made on first use. The
 * cache only ever costs speed: one that cannot be written, before or during the export, is done
 * without (an export for this query only, removed after it).
 */
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
import { SnapshotError } from '../../engine/base/index.js';
import { SCHEMA_VERSION } from '../../engine/export/index.js';
import { cacheRoot, HashIndex, hashIndexFile, indexedHash } from '../../node/cache/result-cache.js';
import { isStaleTemp } from '../../node/cache/stale-temp.js';
import { exportTables, MANIFEST, readManifest } from '../../node/export/export-tables.js';
import { type ExpandedPaths, expandPaths } from '../../node/files/expand-paths.js';
import { VERSION } from '../../node/version.js';

/** The export to query; `scratch` when it was made for this query only (its parent is removed after). */
export interface QueriedExport {
  dir: string;
  scratch: boolean;
}

/**
 * The export directory for `paths`: the directory itself when it is one, else the cached export
 * of those files, made now if it is not there yet.
 */
export async function exportedDir(paths: string[]): Promise<QueriedExport> {
  if (paths.length === 1 && readManifest(paths[0]!)) return { dir: paths[0]!, scratch: false };
  // Scanned once: the export takes these files, and says what was left out only here.
  const expanded = expandPaths(paths);
  const root = path.join(cacheRoot(), 'parquet');
  const dir = path.join(root, await exportKey(expanded));
  if (readManifest(dir)) {
    touch(path.join(dir, MANIFEST));
    trimCache(root, dir);
    return { dir, scratch: false };
  }
  const unwritable = cacheProblem(root);
  if (unwritable === undefined) {
    try {
      await exportTables(paths, dir, 'parquet', { force: true, progress: true, expanded });
      trimCache(root, dir);
      return { dir, scratch: false };
    } catch (e) {
      // A disk that fills up (or a quota, or a cache made read-only) during the export: its
      // temporary folder is gone already, and the query is still answered.
      const code = cacheWriteFailure(e, root);
      if (code === undefined) throw e;
      return scratchExport(paths, expanded, root, code);
    }
  }
  return scratchExport(paths, expanded, root, unwritable);
}

/**
 * The cache key of the files: their contents and places, the run folders given (the same files
 * named one by one have no step or rank, so their export is another one), and the memlens version
 * (a figure a later release computes differently must not be read back from an earlier export).
 * A large file whose size, mtime and inode are unchanged is not read again (the stat index).
 */
async function exportKey({ files, runs }: ExpandedPaths): Promise<string> {
  const key = createHash('sha256').update(`schema ${SCHEMA_VERSION}\nmemlens ${VERSION}\n`);
  for (const r of runs) key.update(`run ${path.resolve(r.root)}\n`);
  const index = new HashIndex(hashIndexFile());
  for (const file of files) {
    const hash = await indexedHash(file, index).catch((e: NodeJS.ErrnoException) => {
      throw new SnapshotError(`${file}: cannot read (${e.code ?? e.message})`);
    });
    key.update(`${path.resolve(file)}\u0000${hash}\n`);
  }
  try {
    index.save();
  } catch {
    // An index that cannot be written only costs the next query a read of the files.
  }
  return key.digest('hex').slice(0, 32);
}

async function scratchExport(
  paths: string[],
  expanded: ExpandedPaths,
  root: string,
  why: string,
): Promise<QueriedExport> {
  process.stderr.write(`memlens: ${root}: cannot write the cache (${why}); exporting for this query only\n`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'memlens-sql-'));
  const out = path.join(scratch, 'export');
  await exportTables(paths, out, 'parquet', { force: false, progress: true, expanded }).catch(
    (e: unknown) => {
      rmSync(scratch, { recursive: true, force: true });
      throw e;
    },
  );
  return { dir: out, scratch: true };
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

/** The failures of writing the cache that a query is answered despite, with their system messages. */
const CACHE_WRITE_ERRORS: Record<string, string> = {
  ENOSPC: 'No space left on device',
  EDQUOT: 'Disk quota exceeded',
  EROFS: 'Read-only file system',
  EACCES: 'Permission denied',
};

/**
 * The code of `e` if it is a failure to write below `root`, else undefined: Node's errors carry a
 * code (and a path, when the call had one); DuckDB's only the system's message and the file.
 */
export function cacheWriteFailure(e: unknown, root: string): string | undefined {
  const err = e as NodeJS.ErrnoException | undefined;
  const code = err?.code;
  if (code !== undefined && code in CACHE_WRITE_ERRORS)
    return err!.path === undefined || isWithin(err!.path, root) ? code : undefined;
  const message = err?.message ?? '';
  if (!message.includes(root)) return undefined;
  return Object.keys(CACHE_WRITE_ERRORS).find((c) => message.includes(CACHE_WRITE_ERRORS[c]!));
}

function isWithin(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return !rel.startsWith('..') && !path.isAbsolute(rel);
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
