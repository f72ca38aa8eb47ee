/**
 * Ungzips one file beside the engine worker (which starts it, inflated-stream.ts), so a gzipped
 * snapshot (a report's embedded one, a dropped .gz) inflates on its own thread while the engine
 * decodes what is already inflated: zlib's inflate of a 1 GB trace costs about as much CPU as
 * decoding it, and in one thread the two took turns. A report's snapshot comes as its base64
 * text, decoded here too. A file `memlens view` serves is fetched here and passed on as it comes:
 * this thread drains the response as it arrives, so the browser's network process and the server
 * never wait on the engine's thread while it decodes.
 *
 * Messages in: `{ file }`, `{ text }` or `{ url }` once, then `{ more: n }` (the engine may take n
 * more parts). Out: for a URL `{ total }` first; `{ part, read }` (its buffer transferred; `read`:
 * the gzipped bytes read so far, for the progress bar), then `{ done: true }`, or `{ error }` (its
 * whole message).
 */
import { base64Decoder } from '../base64-stream.js';
import { portText } from '../text-port.js';
import type { InflaterReply, InflaterRequest } from './inflate-protocol.js';

interface InflaterScope {
  postMessage(message: InflaterReply, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent<InflaterRequest>) => void) | null;
}
const scope = self as unknown as InflaterScope;

/**
 * Bytes per part sent: DecompressionStream gives 64 KiB chunks, and a message each (15,000 for
 * 1 GB) cost both threads more than copying them into parts of 1 MiB does.
 */
const PART_BYTES = 1 << 20;

let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
/** A fetched file: its chunks go on as they are (the response's are ~0.5-2 MiB each). */
let asIs = false;
let credit = 0;
let pumping = false;
let part = new Uint8Array(PART_BYTES);
let filled = 0;
/** Bytes of the file read so far: the progress of a file whose inflated size is not known. */
let read = 0;

scope.onmessage = (e) => {
  const m = e.data;
  if ('more' in m) credit += m.more;
  else if ('url' in m) {
    void fetched(m.url);
    return;
  } else {
    const inflate = new DecompressionStream('gzip') as unknown as ReadableWritablePair<
      Uint8Array,
      Uint8Array
    >;
    const gzipped =
      'file' in m
        ? (m.file.stream() as ReadableStream<Uint8Array>)
        : portText(m.text).pipeThrough(base64Decoder());
    reader = gzipped.pipeThrough(counted()).pipeThrough(inflate).getReader();
  }
  void pump();
};

/** Counts the gzipped bytes on their way to the inflater into `read`. */
function counted(): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      read += chunk.byteLength;
      out.enqueue(chunk);
    },
  });
}

async function fetched(url: string): Promise<void> {
  try {
    const res = await fetch(url);
    if (!res.ok || res.body === null) throw new Error(`cannot read (HTTP ${res.status})`);
    const length = Number(res.headers.get('content-length'));
    scope.postMessage({ total: Number.isFinite(length) && length > 0 ? length : null });
    reader = res.body.getReader();
    asIs = true;
    void pump();
  } catch (err) {
    scope.postMessage({ error: (err as Error).message });
  }
}

/** Sends parts while the engine has credit for them. */
async function pump(): Promise<void> {
  if (pumping || reader === undefined) return;
  pumping = true;
  try {
    while (credit > 0) {
      const r = await reader.read();
      if (r.done) {
        if (filled > 0) send();
        reader = undefined;
        scope.postMessage({ done: true });
        return;
      }
      if (asIs) sendAsIs(r.value);
      else take(r.value);
    }
  } catch (err) {
    const message = (err as Error).message;
    // The inflater fails with a TypeError; the page's text and its base64 fail with their own words
    // ("this report lacks its data element …"), which are not about gzip data.
    const inflating = !asIs && err instanceof TypeError;
    scope.postMessage({ error: inflating ? `bad gzip data: ${message}` : message });
    return;
  } finally {
    pumping = false;
  }
}

/** Copies an inflated chunk into parts, sending each one that fills. */
function take(chunk: Uint8Array): void {
  for (let at = 0; at < chunk.length; ) {
    const n = Math.min(chunk.length - at, PART_BYTES - filled);
    part.set(chunk.subarray(at, at + n), filled);
    filled += n;
    at += n;
    if (filled === PART_BYTES) send();
  }
}

/** A fetched chunk, moved (copied only when it is a view of a larger buffer, which moving would take whole). */
function sendAsIs(chunk: Uint8Array): void {
  const own = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? chunk : chunk.slice();
  scope.postMessage({ part: own }, [own.buffer]);
  credit--;
}

function send(): void {
  const full = filled === part.length ? part : part.slice(0, filled);
  scope.postMessage({ part: full, read }, [full.buffer]);
  credit--;
  part = new Uint8Array(PART_BYTES);
  filled = 0;
}
