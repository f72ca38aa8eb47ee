/**
 * Per-snapshot results kept between runs of memlens, so reopening a run is instant and a run with
 * one new step decodes one file. Entries are keyed by the file's content (SHA-256) and the result
 * format; an index from (path, size, mtime, inode) to content hash spares hashing unchanged large
 * files. Each entry carries a checksum, the schema and the memlens version that wrote it, and is
 * checked when read: an entry in doubt is reported and recomputed, never believed.
 * It lives in the user's cache directory ($XDG_CACHE_HOME/memlens, else ~/.cache/memlens), never
 * next to the snapshots, and is bounded in size (oldest entries go first).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isStaleTemp } from './stale-temp.js';

/**
 * Bump when a cached result's shape or meaning changes: older entries are then ignored. v5: each
 * result names the devices with history (cell-result.ts), which an older entry's summary cannot
 * tell, and carries each device's first timed trace entries (trace-head.ts).
 */
const FORMAT = 'cell-v5';
const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

export function cacheRoot(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache'), 'memlens');
}

/** What the cache holds for some content: its value, nothing, or an entry it cannot trust (and why). */
export type CacheLookup<T> = { value: T } | { doubt: string } | undefined;

/** An entry's first line; the value's JSON follows it. */
interface EntryHeader {
  schema: string;
  memlens: string;
  /** The content hash the entry answers for: a file swapped for another's is caught. */
  content: string;
  /** SHA-256 of the schema, memlens version, content hash and the value's JSON together. */
  sha256: string;
}

export class ResultCache<T> {
  private readonly dir: string;
  private readonly hashes: HashIndex;

  constructor(
    readonly version: string,
    /** Whether a value read back has the shape of T (a checksum cannot vouch for an old writer's bug). */
    private readonly valid: (value: unknown) => value is T,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
    root = cacheRoot(),
  ) {
    this.dir = path.join(root, FORMAT);
    this.hashes = new HashIndex(hashIndexFile(root));
  }

  /** The content hash of `file` if the stat index knows it (HashIndex.known). */
  knownHash(file: string): string | undefined {
    try {
      return this.hashes.known(statKey(file, fs.statSync(file)));
    } catch {
      return undefined;
    }
  }

  /** The entry for content `hash`, checked against its checksum, versions and shape. */
  get(hash: string): CacheLookup<T> {
    let text: string;
    try {
      text = fs.readFileSync(this.entryFile(hash), 'utf8');
    } catch {
      return undefined;
    }
    const cut = text.indexOf('\n');
    const header = cut < 0 ? undefined : parseJson<EntryHeader>(text.slice(0, cut));
    if (header?.schema !== FORMAT) return { doubt: 'damaged (no valid header)' };
    if (header.memlens !== this.version) return { doubt: `written by memlens ${String(header.memlens)}` };
    const body = text.slice(cut + 1);
    if (header.content !== hash) return { doubt: "another file's entry" };
    if (header.sha256 !== checksum(this.version, hash, body)) return { doubt: 'checksum mismatch' };
    const value = parseJson<unknown>(body);
    return this.valid(value) ? { value } : { doubt: 'not the shape of a result' };
  }

  /** Stores the value for content `hash`; a cache that cannot be written is skipped, never an error. */
  put(hash: string, value: T): void {
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      const body = JSON.stringify(value);
      const header: EntryHeader = {
        schema: FORMAT,
        memlens: this.version,
        content: hash,
        sha256: checksum(this.version, hash, body),
      };
      writeAtomically(this.entryFile(hash), `${JSON.stringify(header)}\n${body}`);
    } catch {
      // A read-only or full cache directory only costs the next run its speed.
    }
  }

  /** Remembers that the file with stat key `key` (statKey) holds content `hash`. */
  remember(key: string, hash: string): void {
    this.hashes.remember(key, hash);
  }

  /** Writes the index and trims the cache to its size bound. */
  close(): void {
    try {
      this.hashes.save();
      this.trim();
    } catch {
      // As in put.
    }
  }

  private entryFile(hash: string): string {
    return path.join(this.dir, `${hash}.json`);
  }

  private trim(): void {
    const names = fs.readdirSync(this.dir);
    for (const f of names.filter((f) => f.endsWith('.tmp'))) {
      const file = path.join(this.dir, f);
      const st = fs.statSync(file, { throwIfNoEntry: false });
      if (st && isStaleTemp(f, st.mtimeMs)) fs.rmSync(file, { force: true });
    }
    const entries = names
      .filter((f) => f.endsWith('.json') && f !== 'index.json')
      .map((f) => {
        const st = fs.statSync(path.join(this.dir, f));
        return { f, size: st.size, time: st.mtimeMs };
      })
      .sort((a, b) => b.time - a.time);
    let total = 0;
    for (const e of entries) {
      total += e.size;
      if (total > this.maxBytes) fs.rmSync(path.join(this.dir, e.f), { force: true });
    }
  }
}

/**
 * Files up to this size are always hashed and looked up by content, whatever the stat index
 * says: reading a few MiB costs less than trusting a size and an mtime.
 */
export const ALWAYS_HASHED_BYTES = 4 * 1024 * 1024;

/** Where the stat index lives: one for every user of the cache (run, view, sql), so a file hashed by one is known to all. */
export function hashIndexFile(root = cacheRoot()): string {
  return path.join(root, FORMAT, 'index.json');
}

/**
 * An index from a file's stat key (statKey) to its content hash, so an unchanged large file is not
 * read again to be recognised.
 */
export class HashIndex {
  private read: Record<string, string> | undefined;
  private dirty = false;

  constructor(private readonly file: string) {}

  /** Read on first use: a worker thread that only looks entries up never parses it. */
  private get map(): Record<string, string> {
    this.read ??= readIndex(this.file);
    return this.read;
  }

  known(key: string): string | undefined {
    return Object.hasOwn(this.map, key) ? this.map[key] : undefined;
  }

  remember(key: string, hash: string): void {
    if (this.map[key] === hash) return;
    this.map[key] = hash;
    this.dirty = true;
  }

  /** Writes the index if it changed; throws when it cannot (the caller decides what that costs). */
  save(): void {
    if (!this.dirty) return;
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    writeAtomically(this.file, JSON.stringify(this.map));
    this.dirty = false;
  }
}

/**
 * The content hash of `file`, through `index` for a large file: an unchanged one (same stat key)
 * is not read; one read is remembered if it did not change while it was read.
 */
export async function indexedHash(file: string, index: HashIndex): Promise<string> {
  const before = await fs.promises.stat(file);
  const trusted = before.size > ALWAYS_HASHED_BYTES;
  const known = trusted ? index.known(statKey(file, before)) : undefined;
  if (known !== undefined) return known;
  const hash = await contentHash(file);
  if (trusted && sameFile(before, await fs.promises.stat(file))) index.remember(statKey(file, before), hash);
  return hash;
}

/** Whether two stats of a path are of the same, unchanged file (ctime too: a restored mtime is caught). */
export function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.ctimeMs === b.ctimeMs;
}

/**
 * What the stat index trusts of a file: its path, size, mtime, ctime and inode. ctime moves on
 * every write and no user call sets it back, so a file rewritten in place with its size and mtime
 * restored is still seen (it showed the old file's figures).
 */
export function statKey(
  file: string,
  st: { size: number; mtimeMs: number; ctimeMs: number; ino: number },
): string {
  return `${path.resolve(file)}\u0000${st.size}\u0000${st.mtimeMs}\u0000${st.ctimeMs}\u0000${st.ino}`;
}

function checksum(version: string, hash: string, body: string): string {
  return createHash('sha256').update(`${FORMAT}\n${version}\n${hash}\n`).update(body).digest('hex');
}

/** SHA-256 of a file's bytes, streamed. */
export async function contentHash(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 22 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function parseJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** The index, or an empty one when it is missing or not a map of strings (it only saves hashing). */
function readIndex(file: string): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  const index = parseJson<unknown>(text);
  if (typeof index !== 'object' || index === null || Array.isArray(index)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(index)) if (typeof v === 'string') out[k] = v;
  return out;
}

function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}
