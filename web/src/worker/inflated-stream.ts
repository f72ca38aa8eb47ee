import { SnapshotError } from '../../../src/engine/base/index.js';
import type { InflaterInput, InflaterReply, InflaterRequest } from './inflate-protocol.js';
import InflateWorker from './inflate-worker.ts?worker&inline';

/** Parts (1 MiB each) the inflater may run ahead of the decoder: enough to keep both threads busy. */
const AHEAD = 4;
/**
 * Parts of a fetched file that may wait (~0.5-2 MiB each): enough that the response is drained
 * as it arrives while the engine decodes, so the network process and the server never wait on it.
 */
const AHEAD_FETCHED = 16;

/** A fetched file's size (Content-Length) and whether it is gzip (its parts then come inflated). */
export interface FetchedHead {
  total: number | null;
  gzip: boolean;
}

/** What a fetch that ended before its head came says: nothing. */
const NO_HEAD: FetchedHead = { total: null, gzip: false };

/**
 * A gzipped file's bytes, inflated on a thread of their own (inflate-worker.ts); null where this
 * worker cannot start one (the engine then inflates it itself, load.ts). The inflater sends a part
 * for each one the decoder takes, AHEAD at most waiting, so a fast inflater never fills memory.
 */
export function inflatedStream(
  input: InflaterInput,
  onTotal: (head: FetchedHead) => void = () => {},
): ReadableStream<Uint8Array> | null {
  if (typeof Worker === 'undefined') return null;
  let inflater: Worker;
  try {
    inflater = new InflateWorker();
  } catch {
    // A page whose policy refuses the worker: the engine inflates the file itself.
    return null;
  }
  const ask = (m: InflaterRequest) => inflater.postMessage(m);
  let arrived: (() => void) | undefined;
  // A part already on its way when the load was given up must not be enqueued into a closed stream.
  let cancelled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        inflater.onmessage = (e: MessageEvent<InflaterReply>) => {
          const m = e.data;
          if (cancelled) return;
          if ('total' in m) return onTotal(m);
          if ('part' in m) {
            if (m.read !== undefined) readBehind.set(m.part, m.read);
            controller.enqueue(m.part);
          } else {
            inflater.terminate();
            onTotal(NO_HEAD);
            if ('done' in m) controller.close();
            else controller.error(new SnapshotError(m.error));
          }
          arrived?.();
        };
        inflater.onerror = (e) => {
          e.preventDefault();
          inflater.terminate();
          onTotal(NO_HEAD);
          controller.error(new SnapshotError(`cannot read: ${e.message || 'its reader stopped'}`));
          arrived?.();
        };
        // A text stream moves to the inflater, which reads it from the page directly.
        if ('text' in input)
          inflater.postMessage(input, [input.text, input.again] as unknown as Transferable[]);
        else ask(input);
      },
      // Each part the decoder takes asks for one more; the pull waits for it to arrive.
      pull() {
        ask({ more: 1 });
        return new Promise<void>((resolve) => {
          arrived = resolve;
        });
      },
      cancel() {
        cancelled = true;
        inflater.terminate();
      },
    },
    { highWaterMark: 'url' in input ? AHEAD_FETCHED : AHEAD },
  );
}

/** Whether a File starts as gzip does (1f 8b). */
export async function isGzip(file: File): Promise<boolean> {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  return head[0] === 0x1f && head[1] === 0x8b;
}

/** Each part of an inflated stream, with how many bytes of the gzip file it came from. */
const readBehind = new WeakMap<Uint8Array, number>();

/**
 * How many bytes of the gzip file were read to inflate `part` (a chunk of an inflatedStream), for
 * the progress bar: counted against the file's size, it never passes 100%. (The inflated size is
 * not known: gzip's trailer holds it modulo 2^32, so a file inflating past 4 GiB named a total
 * that the bytes decoded then overran.)
 */
export function gzipBytesRead(part: Uint8Array): number | undefined {
  return readBehind.get(part);
}

/**
 * What a gzip File's trailer says it inflates to (ISIZE: the size modulo 2^32), as a hint for
 * sizing the decoder's columns only: a file inflating past 4 GiB says less than it holds. Null
 * when it is surely wrapped (less than the file itself).
 */
export async function inflatedSizeHint(file: File): Promise<number | null> {
  if (file.size < 18) return null;
  const isize = new DataView(await file.slice(file.size - 4).arrayBuffer()).getUint32(0, true);
  return isize >= file.size ? isize : null;
}
