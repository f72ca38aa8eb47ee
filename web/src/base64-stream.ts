/**
 * A `memlens report` page carries each snapshot as the base64 text of its gzipped bytes. The page
 * hands that text to the worker as it is (a File of this type), and the worker decodes it as it
 * reads, so the main thread never turns megabytes of base64 into bytes of its own.
 */
export const BASE64_TYPE = 'application/x-memlens-gzip-base64';

const PAD = -2;
const SKIP = -3;
/** Each ASCII byte's 6 bits; -1 for a byte base64 never holds. */
const SEXTETS = (() => {
  const t = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  t['='.charCodeAt(0)] = PAD;
  for (const c of ' \t\r\n') t[c.charCodeAt(0)] = SKIP;
  return t;
})();

/** The browser's own decoder (Uint8Array.prototype.setFromBase64), where it has one. */
type SetFromBase64 = (
  this: Uint8Array,
  text: string,
  options: { lastChunkHandling: 'loose' | 'stop-before-partial' },
) => { read: number; written: number };
const setFromBase64 = (Uint8Array.prototype as { setFromBase64?: SetFromBase64 }).setFromBase64;

/** Base64 text in, its bytes out, chunk by chunk (a quantum may span chunks; padding ends it). */
export function base64Decoder(): TransformStream<Uint8Array, Uint8Array<ArrayBuffer>> {
  return setFromBase64 !== undefined ? nativeDecoder(setFromBase64) : portableDecoder();
}

/**
 * The browser's decoder, many times faster than a loop in JavaScript (it shares the worker's
 * thread with the gunzip and the pickle decoder): each chunk's text, less a partial quantum at
 * its end, which goes before the next.
 */
function nativeDecoder(decode: SetFromBase64): TransformStream<Uint8Array, Uint8Array<ArrayBuffer>> {
  const ascii = new TextDecoder('latin1');
  let held = '';
  const run = (text: string, last: boolean) => {
    const out = new Uint8Array(Math.ceil(text.length / 4) * 3);
    const { read, written } = decode.call(out, text, {
      lastChunkHandling: last ? 'loose' : 'stop-before-partial',
    });
    held = text.slice(read);
    return out.subarray(0, written);
  };
  return new TransformStream({
    transform(chunk, controller) {
      const out = run(held + ascii.decode(chunk, { stream: true }), false);
      if (out.length > 0) controller.enqueue(out);
    },
    flush(controller) {
      if (held.length === 0) return;
      const out = run(held, true);
      if (out.length > 0) controller.enqueue(out);
    },
  });
}

function portableDecoder(): TransformStream<Uint8Array, Uint8Array<ArrayBuffer>> {
  let bits = 0;
  let held = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const out = new Uint8Array(Math.floor((held + chunk.length) / 4) * 3);
      let o = 0;
      for (let i = 0; i < chunk.length; i++) {
        const v = SEXTETS[chunk[i]!]!;
        if (v < 0) {
          if (v === -1) throw new Error(`the embedded data is not base64 (byte ${chunk[i]})`);
          continue;
        }
        bits = (bits << 6) | v;
        if (++held === 4) {
          out[o++] = bits >>> 16;
          out[o++] = (bits >>> 8) & 255;
          out[o++] = bits & 255;
          bits = 0;
          held = 0;
        }
      }
      if (o > 0) controller.enqueue(out.subarray(0, o));
    },
    flush(controller) {
      // A last quantum of 2 or 3 characters holds 1 or 2 bytes (its padding was skipped).
      if (held === 2) controller.enqueue(Uint8Array.of(bits >>> 4));
      else if (held === 3) controller.enqueue(Uint8Array.of(bits >>> 10, (bits >>> 2) & 255));
      else if (held === 1) throw new Error('the embedded data ends inside a base64 quantum');
    },
  });
}

/** The bytes a base64 text of `size` characters holds, at most (for a progress bar's total). */
export function decodedSize(size: number): number {
  return Math.floor(size / 4) * 3;
}
