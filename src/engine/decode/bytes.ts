/** Little helpers on byte buffers shared by the decoder's modules. */

/** Unsigned 32-bit little-endian integer at p. */
export function u32(buf: Uint8Array, p: number): number {
  return (buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24)) >>> 0;
}

export function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
