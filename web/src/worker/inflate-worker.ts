/**
 * Ungzips one file beside the engine worker (which starts it, inflated-stream.ts), so a gzipped
 * snapshot (a report's embedded one, a dropped .gz) inflates on its own thread while the engine
 * decodes what is already inflated: zlib's inflate of a 1 GB trace costs about as much CPU as
 * decoding it, and in one thread the two took turns. A report's snapshot comes as its base64
 * text, decoded here too. A file `memlens view` serves is fetched here: this thread drains the
 * response as it arrives, so the browser's network process and the server never wait on the
 * engine's thread while it decodes; a gzipped one is inflated here, any other passed on as it comes.
 * Every gzip member of a file is inflated (gunzip-members.ts), which may read it a second time.
 *
 * Messages in: `{ file }`, `{ text, again }` or `{ url }` once, then `{ more: n }` (the engine may
 * take n more parts). Out: for a URL `{ total, gzip }` first; `{ part, read }` (its buffer
 * transferred; `read`: the gzipped bytes read so far, for the progress bar), then `{ done: true }`,
 * or `{ error }` (its whole message).
 */
import { base64Decoder } from '../base64-stream.js';
import { portText } from '../text-port.js';
import { type GzipOpener, gunzipMembers } from './gunzip-members.js';
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
  } else if ('file' in m) inflate(() => m.file.stream() as ReadableStream<Uint8Array>);
  else {
    // The report's text is read again (from the second port) only for a file of several members.
    const ports = [m.text, m.again];
    inflate(() => portText(ports.shift()!).pipeThrough(base64Decoder()));
  }
  void pump();
};

/** Inflates the gzip file `open` reads, counting its bytes as they are read (from 0 each time it is opened). */
function inflate(open: GzipOpener): void {
  reader = gunzipMembers(() => {
    read = 0;
    return open().pipeThrough(counted());
  }).getReader();
}

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
    const body = res.body.getReader();
    const first = await body.read();
    const head = first.done ? new Uint8Array(0) : first.value;
    const gzip = head[0] === 0x1f && head[1] === 0x8b;
    scope.postMessage({ total: Number.isFinite(length) && length > 0 ? length : null, gzip });
    const response = withHead(head, body);
    if (gzip) {
      let opened = 0;
      inflate(() => (opened++ === 0 ? response : refetched(url)));
    } else {
      reader = response.getReader();
      asIs = true;
    }
    void pump();
  } catch (err) {
    scope.postMessage({ error: (err as Error).message });
  }
}

/** The response's body, its first chunk (already read, to see whether it is gzip) put back. */
function withHead(
  head: Uint8Array,
  body: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  let headGiven = head.length === 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headGiven) {
        headGiven = true;
        controller.enqueue(head);
        return;
      }
      const r = await body.read();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel: () => body.cancel(),
  });
}

/** The file at `url` fetched again from its start, once read. */
function refetched(url: string): ReadableStream<Uint8Array> {
  let body: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (body === undefined) {
        const res = await fetch(url);
        if (!res.ok || res.body === null) throw new Error(`cannot read (HTTP ${res.status})`);
        body = res.body.getReader();
      }
      const r = await body.read();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel: () => body?.cancel(),
  });
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
