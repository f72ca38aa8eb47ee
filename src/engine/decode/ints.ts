import { SnapshotError } from '../base/errors.js';

const TWO_48 = 2 ** 48;
/** Python ints longer than this are refused: no snapshot field needs them and BigInt parsing of
 * a hostile multi-megabyte int would stall. 4 KiB is ~9800 decimal digits. */
const MAX_LONG_BYTES = 4096;

/** Little-endian two's-complement (LONG1/LONG4 payload) → number when exact, else bigint. */
export function decodeLong(buf: Uint8Array, start: number, n: number, offset: number): number | bigint {
  if (n === 0) return 0;
  if (n > MAX_LONG_BYTES) throw new SnapshotError(`int of ${n} bytes is larger than memlens accepts`, offset);
  if (n <= 6) {
    let v = 0;
    for (let i = n - 1; i >= 0; i--) v = v * 256 + buf[start + i]!;
    return buf[start + n - 1]! & 0x80 ? v - 2 ** (8 * n) : v;
  }
  if (n <= 8) {
    let hi = (buf[start + n - 1]! << 24) >> 24; // signed top byte
    for (let i = n - 2; i >= 6; i--) hi = hi * 256 + buf[start + i]!;
    if (Math.abs(hi) < 32) {
      let lo = 0;
      for (let i = 5; i >= 0; i--) lo = lo * 256 + buf[start + i]!;
      return hi * TWO_48 + lo;
    }
  }
  return bigLong(buf, start, n);
}

function bigLong(buf: Uint8Array, start: number, n: number): number | bigint {
  let hex = '';
  for (let i = n - 1; i >= 0; i--) hex += buf[start + i]!.toString(16).padStart(2, '0');
  let v = BigInt(`0x${hex}`);
  if (buf[start + n - 1]! & 0x80) v -= 1n << BigInt(8 * n);
  return toExact(v);
}

/** Decimal text (protocol 0 INT/LONG) → number when exact, else bigint. */
export function parseDecimal(text: string, offset: number): number | bigint {
  const t = text.endsWith('L') ? text.slice(0, -1) : text;
  if (!/^[+-]?\d+$/.test(t) || t.length > MAX_LONG_BYTES * 3) {
    throw new SnapshotError(`bad integer literal '${text.slice(0, 40)}'`, offset);
  }
  const v = BigInt(t);
  return toExact(v);
}

function toExact(v: bigint): number | bigint {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}
