/**
 * A `memlens report` page carries each snapshot as the base64 text of its gzipped bytes, in parts
 * (embedded-data.ts). The page hands the parts' text to the worker as it is, and the worker
 * decodes it as it reads, so the main thread never turns megabytes of base64 into bytes of its own.
 */

const PAD = -2;
const SKIP = -3;
/** Each ASCII character's 6 bits; -1 for a character base64 never holds. */
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
export function base64Decoder(): TransformStream<string, Uint8Array<ArrayBuffer>> {
  return setFromBase64 !== undefined ? nativeDecoder(setFromBase64) : portableDecoder();
}

/**
 * The browser's decoder, many times faster than a loop in JavaScript (it shares its thread with
 * the gunzip): each chunk's text, less a partial quantum at its end, which goes before the next.
 */
function nativeDecoder(decode: SetFromBase64): TransformStream<string, Uint8Array<ArrayBuffer>> {
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
      const out = run(held + chunk, false);
      if (out.length > 0) controller.enqueue(out);
    },
    flush(controller) {
      if (held.length === 0) return;
      const out = run(held, true);
      if (out.length > 0) controller.enqueue(out);
    },
  });
}

function portableDecoder(): TransformStream<string, Uint8Array<ArrayBuffer>> {
  let bits = 0;
  let held = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const out = new Uint8Array(Math.floor((held + chunk.length) / 4) * 3);
      let o = 0;
      for (let i = 0; i < chunk.length; i++) {
        const code = chunk.charCodeAt(i);
        const v = code < 256 ? SEXTETS[code]! : -1;
        if (v < 0) {
          if (v === -1) throw new Error(`the embedded data is not base64 (character ${code})`);
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
