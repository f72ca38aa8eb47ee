/**
 * A gzip file inflated whole, every member of it, as the CLI reads it. A file may hold several
 * gzip members one after another (`cat a.gz b.gz`, bgzip's blocks): Node's zlib, which the CLI
 * inflates with, starts a new member after each one while the next byte is not zero, and takes
 * zero bytes there for padding that ends the stream (src/node_zlib.cc,
 * ZlibContext::DoThreadPoolWork: `while (strm_.avail_in > 0 && mode_ == GUNZIP && err_ ==
 * Z_STREAM_END && strm_.next_in[0] != 0x00) { Reset…; inflate… }`). The browser's
 * DecompressionStream stops at the first member's end and refuses the rest ("Junk found after end
 * of compressed data"), and it cannot say where that end was.
 *
 * So the browser's own inflater reads the file first, at its speed; only when it refuses the file
 * is the file read again from its start, by zlib itself ported to JS (pako, whose gzip wrapper
 * checks each member's CRC and length as zlib does), following Node's rule, and the bytes the
 * first reading gave are skipped. A file of one member never pays for it; a damaged one is read
 * twice before it is refused, in zlib's words.
 */
import {
  Z_BUF_ERROR,
  Z_NO_FLUSH,
  Z_OK,
  Z_STREAM_END,
  ZStream,
  zlibInflate,
  zlibInflateInit2,
  zlibInflateReset,
} from 'pako';

/** Opens the gzip file from its start: called once, and again when it holds more than one member. */
export type GzipOpener = () => ReadableStream<Uint8Array>;

export function gunzipMembers(open: GzipOpener): ReadableStream<Uint8Array> {
  const parts = inflateAll(open);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await parts.next();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    async cancel() {
      await parts.return(undefined);
    },
  });
}

async function* inflateAll(open: GzipOpener): AsyncGenerator<Uint8Array> {
  let given = 0;
  const native = open()
    .pipeThrough(new DecompressionStream('gzip') as unknown as GzipPair)
    .getReader();
  try {
    for (let r = await native.read(); !r.done; r = await native.read()) {
      given += r.value.length;
      yield r.value;
    }
    return;
  } catch (e) {
    // The inflater refuses with a TypeError; the source's own failures are not about gzip.
    if (!(e instanceof TypeError)) throw e;
  } finally {
    // A load given up stops the reading (after an error or the end, this does nothing).
    native.cancel().catch(() => {});
  }
  yield* skip(inflateInJs(open()), given);
}

/** The parts after the first `n` bytes. */
async function* skip(parts: AsyncIterable<Uint8Array>, n: number): AsyncGenerator<Uint8Array> {
  let left = n;
  for await (const part of parts) {
    if (left >= part.length) left -= part.length;
    else {
      yield left === 0 ? part : part.subarray(left);
      left = 0;
    }
  }
}

/** Output bytes per zlib call. */
const OUT_BYTES = 1 << 16;

/** Every member of the stream, by zlib's rules and Node's between members. */
export async function* inflateInJs(gzipped: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const members = new Members();
  const reader = gzipped.getReader();
  try {
    for (let r = await reader.read(); !r.done && !members.stopped; r = await reader.read())
      yield* members.push(r.value);
    members.finish();
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** zlib's inflate over a gzip stream, member after member. */
class Members {
  private readonly strm = new ZStream();
  /** The member read last has ended: the next byte starts another, or (zero) ends the stream. */
  private between = false;
  /** Zero bytes followed a member: the rest of the file is padding, ignored. */
  stopped = false;

  constructor() {
    // 16 + 15: a gzip wrapper only, and zlib's largest window.
    check(this.strm, zlibInflateInit2(this.strm, 16 + 15));
  }

  *push(input: Uint8Array): Generator<Uint8Array> {
    const s = this.strm;
    s.input = input;
    s.next_in = 0;
    s.avail_in = input.length;
    for (;;) {
      if (this.between) {
        if (s.avail_in === 0) return;
        if (input[s.next_in] === 0) {
          this.stopped = true;
          return;
        }
        check(s, zlibInflateReset(s));
        this.between = false;
      }
      s.output = new Uint8Array(OUT_BYTES);
      s.next_out = 0;
      s.avail_out = OUT_BYTES;
      const status = zlibInflate(s, Z_NO_FLUSH);
      if (s.next_out > 0) yield s.output.subarray(0, s.next_out);
      if (status === Z_STREAM_END) this.between = true;
      // No progress without more input (zlib's Z_BUF_ERROR is not an error here).
      else if (status === Z_BUF_ERROR) return;
      else check(s, status);
      // All input taken and room left: nothing is pending inside zlib.
      if (!this.between && s.avail_in === 0 && s.avail_out > 0) return;
    }
  }

  /** At the file's end: a member cut short is an error, as Node's "unexpected end of file". */
  finish(): void {
    if (!this.between && !this.stopped) throw new TypeError('unexpected end of file');
  }
}

function check(s: ZStream, status: number): void {
  if (status !== Z_OK) throw new TypeError(s.msg || `zlib error ${status}`);
}

/** DecompressionStream typed the same way in DOM/WebWorker and Node typings. */
interface GzipPair {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
}
