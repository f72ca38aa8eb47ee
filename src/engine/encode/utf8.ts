/**
 * UTF-8 as Python's `str.encode('utf-8', 'surrogatepass')`, which is what pickle uses: a lone
 * surrogate becomes its own 3-byte sequence instead of U+FFFD (what TextEncoder would write),
 * so strings round-trip exactly.
 * The caller guarantees `3 * s.length` bytes of room at `pos`. Returns the number of bytes written.
 */
export function encodeUtf8Into(s: string, buf: Uint8Array, pos: number): number {
  const start = pos;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[pos++] = c;
    } else if (c < 0x800) {
      buf[pos++] = 0xc0 | (c >> 6);
      buf[pos++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && isLowSurrogate(s.charCodeAt(i + 1))) {
      c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
      buf[pos++] = 0xf0 | (c >> 18);
      buf[pos++] = 0x80 | ((c >> 12) & 0x3f);
      buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
      buf[pos++] = 0x80 | (c & 0x3f);
    } else {
      buf[pos++] = 0xe0 | (c >> 12);
      buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
      buf[pos++] = 0x80 | (c & 0x3f);
    }
  }
  return pos - start;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c < 0xe000;
}

/** Encodes into a fresh array of the exact length. */
export function encodeUtf8(s: string): Uint8Array {
  const tmp = new Uint8Array(3 * s.length);
  const n = encodeUtf8Into(s, tmp, 0);
  return tmp.slice(0, n);
}
