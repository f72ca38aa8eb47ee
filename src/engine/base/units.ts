/**
 * Figures typed by a user, read back the way memlens prints them: counts with thousands
 * separators ("20,047", as formatCount writes entries) and byte sizes with units ("80GiB",
 * "1.5 GB", "512MiB", "4096"). Shared by the CLI's options and the web app's fields.
 */

const BYTE_UNITS: Record<string, number> = {
  b: 1,
  k: 1024,
  kb: 1e3,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1e6,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1e9,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1e12,
  tib: 1024 ** 4,
};

/** A non-negative integer as printed ("20,047", "20047", "20_047"); null if it is not one. */
export function parseCountText(text: string): number | null {
  const t = text.trim();
  if (!/^\d{1,3}(,\d{3})*$|^\d+(_\d+)*$/.test(t)) return null;
  const n = Number(t.replace(/[,_]/g, ''));
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * A byte size: a number with an optional unit. Bare units are binary, as PyTorch's own settings
 * (max_split_size_mb) and nvidia-smi's MiB are; "GB"/"MB" are decimal as written, "GiB" binary.
 * Null when the text is not a size or is not a whole number of bytes.
 */
export function parseByteText(text: string): number | null {
  const m = /^\s*(\d+(?:[.,_]\d+)*)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (m === null) return null;
  const digits = m[1]!.includes('.') ? m[1]!.replace(/[,_]/g, '') : (parseCountText(m[1]!) ?? Number.NaN);
  const value = Number(digits);
  const unit = BYTE_UNITS[(m[2] ?? '').toLowerCase() || 'b'];
  if (unit === undefined || !Number.isFinite(value)) return null;
  const bytes = Math.round(value * unit);
  return Number.isSafeInteger(bytes) && Math.abs(value * unit - bytes) < 0.5 ? bytes : null;
}

/**
 * A range of entries "A:B" with each side as printed ("20,047:30,000"); either side may be left
 * out (":B" from the start, "A:" to the end). Null when it is not one.
 */
export function parseRangeText(text: string): [number, number] | null {
  const m = /^([^:]*):([^:]*)$/.exec(text.trim());
  if (m === null) return null;
  const side = (t: string, open: number) => (t.trim() === '' ? open : parseCountText(t));
  const a = side(m[1]!, 0);
  const b = side(m[2]!, Number.MAX_SAFE_INTEGER);
  return a === null || b === null ? null : [a, b];
}
