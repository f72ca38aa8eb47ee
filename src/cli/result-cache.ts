/**
 * Per-snapshot results kept between runs of memlens, so reopening a run is instant and a run with
 * one new step decodes one file. Entries are keyed by the file's content (SHA-256) and the result
 * format; an index from (path, size, mtime, inode) to content hash spares hashing unchanged files.
 * It lives in the user's cache directory ($XDG_CACHE_HOME/memlens, else ~/.cache/memlens), never
 * next to the snapshots, and is bounded in size (oldest entries go first).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isStaleTemp } from './stale-temp.js';

/** Bump when a cached result's shape or meaning changes: older entries are then ignored. */
const FORMAT = 'cell-v1';
const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

export function cacheRoot(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache'), 'memlens');
}

export class ResultCache<T> {
  private readonly dir: string;
  private readonly indexFile: string;
  private index: Record<string, string>;
  private dirty = false;

  constructor(
    readonly version: string,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
    root = cacheRoot(),
  ) {
    this.dir = path.join(root, FORMAT);
    this.indexFile = path.join(this.dir, 'index.json');
    this.index = readJson<Record<string, string>>(this.indexFile) ?? {};
  }

  /** The content hash of `file` if it is unchanged since it was last hashed. */
  knownHash(file: string): string | undefined {
    const key = statKey(file);
    return key === null ? undefined : this.index[key];
  }

  get(hash: string): T | undefined {
    const entry = readJson<{ version: string; result: T }>(this.entryFile(hash));
    return entry?.version === this.version ? entry.result : undefined;
  }

  /** Stores a result; a cache that cannot be written is skipped, never an error of the command. */
  put(file: string, hash: string, result: T): void {
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      writeAtomically(this.entryFile(hash), JSON.stringify({ version: this.version, result }));
      const key = statKey(file);
      if (key !== null) {
        this.index[key] = hash;
        this.dirty = true;
      }
    } catch {
      // A read-only or full cache directory only costs the next run its speed.
    }
  }

  /** Writes the index and trims the cache to its size bound. */
  close(): void {
    try {
      if (this.dirty) writeAtomically(this.indexFile, JSON.stringify(this.index));
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

/** SHA-256 of a file's bytes, streamed. */
export async function contentHash(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 22 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function statKey(file: string): string | null {
  try {
    const st = fs.statSync(file);
    return `${path.resolve(file)}\u0000${st.size}\u0000${st.mtimeMs}\u0000${st.ino}`;
  } catch {
    return null;
  }
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
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
