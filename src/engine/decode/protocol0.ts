import { SnapshotError } from '../base/errors.js';

/** Literals of protocol 0/1 text opcodes (FLOAT, STRING, UNICODE), as Python's repr writes them. */

export function parseFloatText(line: string, at: number): number {
  if (/^[+-]?nan$/i.test(line)) return Number.NaN;
  if (/^[+-]?inf(inity)?$/i.test(line)) return line.startsWith('-') ? -Infinity : Infinity;
  const v = Number(line);
  if (line.trim() === '' || Number.isNaN(v))
    throw new SnapshotError(`bad float literal '${line.slice(0, 40)}'`, at);
  return v;
}

export function unquote(line: string, at: number): string {
  const q = line[0];
  if ((q !== "'" && q !== '"') || line[line.length - 1] !== q) {
    throw new SnapshotError('STRING argument is not quoted', at);
  }
  return line.slice(1, -1).replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_m, e: string) => unescapeChar(e));
}

function unescapeChar(e: string): string {
  if (e.startsWith('x')) return String.fromCharCode(parseInt(e.slice(1), 16));
  const map: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\\': '\\', "'": "'", '"': '"' };
  return map[e] ?? `\\${e}`;
}

/** Protocol 0 UNICODE: raw-unicode-escape, i.e. latin-1 text with \uXXXX and \UXXXXXXXX escapes. */
export function rawUnicodeEscape(line: string): string {
  return line.replace(/\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})/g, (_m, u?: string, U?: string) =>
    String.fromCodePoint(parseInt(u ?? U ?? '0', 16)),
  );
}
