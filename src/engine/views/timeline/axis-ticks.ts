/**
 * Where the timeline's axes put their ticks. Bytes are read in binary units (formatBytes), so a
 * byte axis steps by powers of two: 16 GiB, 32 GiB … or 256 MiB, 512 MiB …, never 18.6 GiB.
 * Entries are whole numbers: an entry axis never ticks between two entries. Tick values are
 * multiples of the step computed by multiplication, so none reads 0.30000000000000004.
 */

/** Multiples of the step in [lo, hi]. */
function multiples(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  for (let k = Math.ceil(lo / step); k * step <= hi; k++) out.push(k * step);
  return out;
}

/** Byte values at a power-of-two step, about `count` of them (at most twice as many) in [0, top]. */
export function byteTicks(top: number, count: number): number[] {
  if (!(top > 0) || count < 1) return [];
  const step = 2 ** Math.round(Math.log2(Math.max(1, top / count)));
  return multiples(0, top, step);
}

/**
 * Round values (1, 2, 5 × 10^k) inside [lo, hi], about `count` of them; `whole`: the step is at
 * least 1 (entry positions).
 */
export function decimalTicks(lo: number, hi: number, count: number, whole = false): number[] {
  const span = hi - lo;
  if (!(span > 0) || count < 1) return [];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  if (whole) step = Math.max(1, Math.round(step));
  // 0.1 * 3 is 0.30000000000000004: fractional steps are rounded to their own decimals.
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  return multiples(lo, hi, step).map((v) => Number(v.toFixed(digits)));
}
