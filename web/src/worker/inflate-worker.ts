/**
 * Ungzips one file beside the engine worker (which starts it, inflated-stream.ts), so a gzipped
 * snapshot (a report's embedded one, a dropped .gz) inflates on its own thread while the engine
 * decodes what is already inflated: zlib's inflate of a 1 GB trace costs about as much CPU as
 * decoding it, and in one thread the two took turns. A report's snapshot comes as its base64
 * text, decoded here too.
 *
 * Messages in: `{ file }` or `{ text }` once, then `{ more: n }` (the engine may take n more parts).
 * Out: `{ part }` (its buffer transferred), then `{ done: true }`, or `{ error }`.
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
let credit = 0;
let pumping = false;
let part = new Uint8Array(PART_BYTES);
let filled = 0;

scope.onmessage = (e) => {
  const m = e.data;
  if ('more' in m) credit += m.more;
  else {
    const inflate = new DecompressionStream('gzip') as unknown as ReadableWritablePair<
      Uint8Array,
      Uint8Array
    >;
    const gzipped =
      'file' in m
        ? (m.file.stream() as ReadableStream<Uint8Array>)
        : portText(m.text).pipeThrough(base64Decoder());
    reader = gzipped.pipeThrough(inflate).getReader();
  }
  void pump();
};

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
      take(r.value);
    }
  } catch (err) {
    scope.postMessage({ error: (err as Error).message });
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

function send(): void {
  const full = filled === part.length ? part : part.slice(0, filled);
  scope.postMessage({ part: full }, [full.buffer]);
  credit--;
  part = new Uint8Array(PART_BYTES);
  filled = 0;
}
