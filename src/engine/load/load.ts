import { SnapshotError } from '../base/errors.js';
import { decodeJsonSnapshot, MAX_JSON_BYTES } from '../decode/json-snapshot.js';
import { Unpickler } from '../decode/unpickler.js';
import { buildSnapshot, type Snapshot } from '../model/snapshot.js';

export interface LoadOptions {
  /** Called after each chunk with the number of input bytes consumed so far. */
  onProgress?: (bytesRead: number) => void;
  /** Input size if known: sizes the trace columns up front. */
  sizeHint?: number;
}

export type InputFormat = 'pickle' | 'json' | 'gzip';

/** Bytes per trace entry in real pickles are ~80-200; over-reserving costs only address space. */
const BYTES_PER_ENTRY_GUESS = 64;

export function sniffFormat(head: Uint8Array): InputFormat {
  if (head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  // A UTF-8 byte order mark (Windows editors write one) may precede JSON; TextDecoder drops it.
  const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  for (const b of head.subarray(bom)) {
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
    return b === 0x7b || b === 0x5b ? 'json' : 'pickle';
  }
  return 'pickle';
}

/**
 * Opcodes a pickled dict or list can begin with: PROTO (protocol 2 and later), else protocol 0/1's
 * MARK, EMPTY_DICT, EMPTY_LIST or GLOBAL. Anything else is some other file (text, an image, a
 * checkpoint), and saying so beats the opcode the unpickler would trip on first.
 */
const PICKLE_STARTS = new Set([0x80, 0x28, 0x7d, 0x5d, 0x63]);

function checkPickleStart(head: Uint8Array): void {
  const b = head[0]!;
  if (PICKLE_STARTS.has(b)) return;
  const shown =
    b >= 0x21 && b <= 0x7e ? `'${String.fromCharCode(b)}'` : `0x${b.toString(16).padStart(2, '0')}`;
  throw new SnapshotError(
    `not a pickle: starts with ${shown} (expected a snapshot from torch.cuda.memory._dump_snapshot, pickle or JSON)`,
  );
}

/**
 * Loads a snapshot from a stream of chunks: pickle (protocol 0-5), JSON, or either one gzipped.
 * Works the same in Node and in a Web Worker; the caller only supplies the bytes. A chunk must
 * stay intact only until the chunk after next is asked for: the source may refill its memory then.
 */
export async function loadSnapshot(
  chunks: AsyncIterable<Uint8Array>,
  opts: LoadOptions = {},
): Promise<Snapshot> {
  const it = chunks[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done || first.value.length === 0) throw new SnapshotError('empty file');
  const format = sniffFormat(first.value.subarray(0, 64));
  let read = first.value.length;
  const counted = (async function* () {
    yield first.value;
    for (let r = await it.next(); !r.done; r = await it.next()) {
      read += r.value.length;
      yield r.value;
    }
  })();
  const progress = (): void => opts.onProgress?.(read);
  try {
    if (format === 'gzip') return await loadPlain(gunzip(counted), progress, undefined);
    return await loadPlain(counted, progress, opts.sizeHint, format);
  } catch (e) {
    // A file refused before its end: let the source close what it opened (a file handle).
    await it.return?.();
    throw e;
  }
}

async function loadPlain(
  chunks: AsyncIterable<Uint8Array>,
  progress: () => void,
  sizeHint: number | undefined,
  known?: InputFormat,
): Promise<Snapshot> {
  const it = chunks[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done || first.value.length === 0) throw new SnapshotError('empty input after decompression');
  const format = known ?? sniffFormat(first.value.subarray(0, 64));
  if (format === 'gzip') throw new SnapshotError('gzip inside gzip is not supported');
  if (format === 'pickle') checkPickleStart(first.value);
  const sink = format === 'json' ? new JsonSink() : new PickleSink(sizeHint);
  sink.push(first.value);
  progress();
  for (let r = await it.next(); !r.done; r = await it.next()) {
    sink.push(r.value);
    progress();
  }
  return sink.finish();
}

/** Synchronous load of an in-memory pickle or JSON (not gzip): for tests and small inputs. */
export function loadSnapshotBytes(bytes: Uint8Array, options: DecodeOptions = {}): Snapshot {
  if (bytes.length === 0) throw new SnapshotError('empty file');
  const format = sniffFormat(bytes.subarray(0, 64));
  if (format === 'gzip') throw new SnapshotError('gzip input needs the streaming loader');
  if (format === 'pickle') checkPickleStart(bytes);
  const sink = format === 'json' ? new JsonSink() : new PickleSink(bytes.length, options);
  sink.push(bytes);
  return sink.finish();
}

export interface DecodeOptions {
  /** false: read every trace entry in JS instead of with the WebAssembly scanner (for tests). */
  entryScan?: boolean;
}

interface Sink {
  push(chunk: Uint8Array): void;
  finish(): Snapshot;
}

class PickleSink implements Sink {
  private readonly vm: Unpickler;
  constructor(sizeHint: number | undefined, options: DecodeOptions = {}) {
    this.vm = new Unpickler(
      Math.ceil((sizeHint ?? 0) / BYTES_PER_ENTRY_GUESS),
      true,
      options.entryScan ?? true,
    );
  }
  push(chunk: Uint8Array): void {
    this.vm.push(chunk);
  }
  finish(): Snapshot {
    return buildSnapshot(this.vm.finish());
  }
}

class JsonSink implements Sink {
  private readonly parts: Uint8Array[] = [];
  private bytes = 0;
  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.bytes > MAX_JSON_BYTES) {
      throw new SnapshotError(
        'JSON snapshots over 512 MiB are not supported (a JS string cannot hold them); use the pickle',
      );
    }
    // Kept to the end, past the source's reuse of its memory.
    this.parts.push(chunk.slice());
  }
  finish(): Snapshot {
    const all = new Uint8Array(this.bytes);
    let at = 0;
    for (const p of this.parts) {
      all.set(p, at);
      at += p.length;
    }
    const text = new TextDecoder('utf-8').decode(all);
    return buildSnapshot(decodeJsonSnapshot(text));
  }
}

async function* gunzip(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const source = chunks[Symbol.asyncIterator]();
  // pull (not start) so compressed chunks are read only as fast as they are inflated.
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await source.next();
      if (r.done) controller.close();
      // A copy: the inflater may still hold it when the source refills its memory.
      else controller.enqueue(r.value.slice());
    },
  }).pipeThrough(new DecompressionStream('gzip') as unknown as GzipPair);
  const reader = stream.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
  } catch (e) {
    throw new SnapshotError(`bad gzip data: ${(e as Error).message}`);
  }
}

/** DecompressionStream typed the same way in DOM/WebWorker and Node typings. */
interface GzipPair {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
}
