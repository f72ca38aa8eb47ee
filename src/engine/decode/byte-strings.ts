/**
 * UTF-8 bytes → JS strings, with a small cache for short strings. Snapshots repeat the same short
 * strings millions of times as fresh objects (e.g. compile_context 'N/A' on every trace entry);
 * returning one cached string saves the allocation and lets the memo share it.
 */
const CACHE_SIZE = 4096;
const CACHE_MAX_LEN = 32;
const cache: (string | undefined)[] = new Array(CACHE_SIZE);
const utf8 = new TextDecoder('utf-8');
const latin1 = new TextDecoder('latin1');

export function decodeUtf8(buf: Uint8Array, start: number, length: number): string {
  if (length === 0) return '';
  if (length > CACHE_MAX_LEN) return utf8.decode(buf.subarray(start, start + length));
  let h = length;
  let ascii = true;
  for (let i = 0; i < length; i++) {
    const b = buf[start + i]!;
    ascii = ascii && b < 0x80;
    h = Math.imul(h ^ b, 0x01000193);
  }
  if (!ascii) return utf8.decode(buf.subarray(start, start + length));
  const slot = (h ^ (h >>> 13)) & (CACHE_SIZE - 1);
  const hit = cache[slot];
  if (hit !== undefined && hit.length === length && sameAscii(hit, buf, start)) return hit;
  const s = String.fromCharCode.apply(null, buf.subarray(start, start + length) as unknown as number[]);
  cache[slot] = s;
  return s;
}

function sameAscii(s: string, buf: Uint8Array, start: number): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== buf[start + i]) return false;
  return true;
}

/** Protocol 0-2 STRING/BINSTRING payloads: Python 3 decodes them as ASCII/latin-1 text. */
export function decodeLatin1(buf: Uint8Array, start: number, length: number): string {
  return latin1.decode(buf.subarray(start, start + length));
}

/** True when `buf[start..start+length)` holds exactly the ASCII text `s`. */
export function bytesEqualAscii(buf: Uint8Array, start: number, length: number, s: string): boolean {
  return length === s.length && start + length <= buf.length && sameAscii(s, buf, start);
}
