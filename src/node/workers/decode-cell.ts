/**
 * One snapshot of a run, read once: the bytes that feed the decoder are the bytes hashed for the
 * result cache, and the file's stat key is taken from the open descriptor, so a file replaced or
 * rewritten while it is read can never lend its name or hash to the figures of other bytes.
 * Runs on the pool's worker threads (cell-worker.ts), or on the main thread for a lone file.
 */
import { createHash, type Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { cellResult } from '../../engine/analyses/run/index.js';
import { SnapshotError } from '../../engine/base/index.js';
import type { CellOutcome } from '../cache/cell-outcome.js';
import { ALWAYS_HASHED_BYTES, type ResultCache, sameFile, statKey } from '../cache/result-cache.js';
import { decodeChunks } from '../files/open-snapshot.js';
import { handleChunks, openInput } from '../files/read-file.js';

/**
 * A file refused early is read to its end (to key its failure by its whole content) only up to
 * this size: a 10 GB checkpoint among the snapshots is not worth reading to remember that.
 */
const MAX_DRAINED_BYTES = 256 * 1024 * 1024;

/** The least chunk a small file is read in. */
const SMALL_CHUNK = 64 * 1024;

export interface CellJob {
  file: string;
  /** Look every file up by its content first, not only small ones (`--verify-cache`). */
  verify: boolean;
}

export interface CellDone {
  outcome: CellOutcome;
  /** SHA-256 of the bytes the outcome is of; absent without a cache or when the read failed. */
  hash?: string;
  /** The file's stat key as it was read, absent when it changed meanwhile: what the index may keep. */
  key?: string;
  /** The outcome came from the cache (it need not be stored again). */
  cached: boolean;
  /** Why the cache's entry for this content was not trusted. */
  doubt?: string;
}

export interface CellContext {
  cache: ResultCache<CellOutcome> | null;
  /** Draw a progress bar on stderr (a lone file on the main thread). */
  progress: boolean;
}

interface Decoded {
  outcome: CellOutcome;
  /** The outcome follows from the bytes alone (a result, or the file's own fault): cacheable. */
  ofContent: boolean;
}

export async function decodeCell(job: CellJob, ctx: CellContext): Promise<CellDone> {
  let handle: FileHandle;
  try {
    handle = await openInput(job.file);
  } catch (e) {
    return { outcome: failure(e), cached: false };
  }
  try {
    const before = await handle.stat();
    const notFile = before.isDirectory()
      ? 'is a directory, expected a snapshot file'
      : before.isFile()
        ? null
        : 'is not a regular file';
    if (notFile !== null) return { outcome: { error: notFile }, cached: false };
    const done = await readCell(job, ctx, handle, before.size);
    // Small files are looked up by content on every run: the index only keeps large ones.
    if (done.hash !== undefined && before.size > ALWAYS_HASHED_BYTES && sameFile(before, await handle.stat()))
      done.key = statKey(job.file, before);
    return done;
  } catch (e) {
    // The disk failed us, not the content: said, and not remembered.
    return { outcome: failure(e), cached: false };
  } finally {
    await handle.close();
  }
}

async function readCell(job: CellJob, ctx: CellContext, handle: FileHandle, size: number): Promise<CellDone> {
  const cache = ctx.cache;
  // A small file is read in one chunk (its size and a byte, to see its end): the reader's buffers are that big.
  const chunk = size <= ALWAYS_HASHED_BYTES ? Math.max(SMALL_CHUNK, size + 1) : undefined;
  if (cache === null)
    return { ...(await decode(job.file, size, handleChunks(handle, chunk), ctx)), cached: false };
  if (size <= ALWAYS_HASHED_BYTES) {
    // Small: the whole file in memory, hashed, looked up, and decoded from the same bytes.
    const bytes = Buffer.concat(await all(handleChunks(handle, chunk)));
    const hash = createHash('sha256').update(bytes).digest('hex');
    const found = cache.get(hash);
    if (found !== undefined && 'value' in found) return { outcome: found.value, hash, cached: true };
    const decoded = await decode(job.file, bytes.length, once(bytes), ctx);
    return { outcome: decoded.outcome, hash: keyed(decoded, hash), cached: false, doubt: found?.doubt };
  }
  let doubt: string | undefined;
  if (job.verify) {
    const before = await hashOf(handleChunks(handle));
    const found = cache.get(before);
    if (found !== undefined && 'value' in found) return { outcome: found.value, hash: before, cached: true };
    doubt = found?.doubt;
  }
  // Large: hashed as it is decoded, one read.
  const hash = createHash('sha256');
  const read = { complete: false };
  const chunks = hashed(handleChunks(handle), hash, read, size <= MAX_DRAINED_BYTES);
  const decoded = await decode(job.file, size, chunks, ctx);
  return {
    outcome: decoded.outcome,
    hash: read.complete ? keyed(decoded, hash.digest('hex')) : undefined,
    cached: false,
    doubt,
  };
}

async function decode(
  file: string,
  size: number,
  chunks: AsyncIterable<Uint8Array>,
  ctx: CellContext,
): Promise<Decoded> {
  try {
    const snapshot = await decodeChunks(file, size, chunks, { progress: ctx.progress });
    return { outcome: { result: cellResult(snapshot) }, ofContent: true };
  } catch (e) {
    // What memlens failed on (memory, its own bugs, the disk) may not fail next time.
    return { outcome: failure(e), ofContent: e instanceof SnapshotError && e.cause === undefined };
  }
}

const keyed = (d: Decoded, hash: string): string | undefined => (d.ofContent ? hash : undefined);

function failure(e: unknown): { error: string } {
  return { error: e instanceof Error ? e.message.split('\n')[0]! : String(e) };
}

/**
 * The chunks, each hashed as it passes. If the decoder stops early (a bad file), the rest is
 * read and hashed too (`drain`), from the same descriptor, so the failure is keyed by the whole
 * content; without `drain` the hash stays incomplete and nothing is cached.
 */
async function* hashed(
  chunks: AsyncIterable<Uint8Array>,
  hash: Hash,
  read: { complete: boolean },
  drain: boolean,
): AsyncGenerator<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  let state: 'reading' | 'ended' | 'failed' = 'reading';
  const next = async () => {
    try {
      return await it.next();
    } catch (e) {
      state = 'failed';
      throw e;
    }
  };
  try {
    for (let r = await next(); !r.done; r = await next()) {
      hash.update(r.value);
      yield r.value;
    }
    state = 'ended';
  } finally {
    if (state === 'reading' && drain) {
      try {
        for (let r = await next(); !r.done; r = await next()) hash.update(r.value);
        state = 'ended';
      } catch {
        // The read itself failed: nothing is keyed by this content.
      }
    }
    read.complete = state === 'ended';
  }
}

async function hashOf(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of chunks) hash.update(chunk);
  return hash.digest('hex');
}

/** Copies of the chunks (the reader reuses its buffers). */
async function all(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const chunk of chunks) out.push(chunk.slice());
  return out;
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}
