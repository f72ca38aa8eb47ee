/** A CUDA stream as PyTorch users know it: 0 is the default stream, others are cudaStream_t pointers. */
export function formatStream(v: number): string {
  return v === 0 ? '0 (default)' : `0x${v.toString(16)}`;
}

/** Human-readable sizes in binary units, as PyTorch's memory_summary prints them. */
export function formatBytes(n: number): string {
  const abs = Math.abs(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = abs;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const text = u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
  return n < 0 ? `-${text}` : text;
}

/**
 * Two byte counts about to be compared in words ("a < b"): in exact bytes when rounding would
 * print them the same, so the comparison never reads "1.05 GiB < 1.05 GiB".
 */
export function formatBytesPair(a: number, b: number): [string, string] {
  const [x, y] = [formatBytes(a), formatBytes(b)];
  if (x !== y || a === b) return [x, y];
  return [`${a.toLocaleString('en-US')} B`, `${b.toLocaleString('en-US')} B`];
}

/**
 * Counts as en-US writes them ("1,234,567"). Integers, nearly every count, are grouped here: the
 * first Intl.NumberFormat of a process loads ICU's number data, ~10 ms of every command's start.
 * Anything else (a fraction, -0, beyond 2^53, not finite) goes to one formatter, built when first
 * needed (`toLocaleString` builds one per call, and the web app formats thousands per render).
 */
let countFormat: Intl.NumberFormat | undefined;

export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) {
    countFormat ??= new Intl.NumberFormat('en-US');
    return countFormat.format(n);
  }
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}

export function formatDuration(us: number): string {
  if (us < 1000) return `${us} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(1)} ms`;
  if (us < 60e6) return `${(us / 1e6).toFixed(2)} s`;
  return `${(us / 60e6).toFixed(1)} min`;
}

/**
 * A count and its noun agreeing in number: "1 block", "2 blocks", "1,024 entries". `many` for
 * nouns whose plural is not the noun plus s.
 */
export function plural(
  n: number,
  one: string,
  many = /[^aeiou]y$/.test(one) ? `${one.slice(0, -1)}ies` : `${one}s`,
): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A time_us as the distance from the trace's first entry ("1.25 s"), not raw epoch µs; null without times. */
export function sinceStart(us: number | null, start: number | null): string | null {
  return us === null || start === null ? null : formatDuration(Math.max(0, us - start));
}
