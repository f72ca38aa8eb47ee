import type { Cell, RowTable } from './tables.js';

/**
 * The tables as CSV, one writer for the CLI (`memlens events/blocks --format csv`) and the web
 * app's export, so a filtered table exported from the page reads exactly as the CLI prints it.
 * csvCell defines how a cell reads; CsvBytes writes the same text straight into byte chunks.
 */
export function csvHeader(table: RowTable): string {
  return ['device', ...table.columns].join(',');
}

export function csvRow(device: number, table: RowTable, row: number): string {
  let line = String(device);
  for (let c = 0; c < table.columns.length; c++) line += `,${csvCell(table.cell(row, c))}`;
  return line;
}

export function csvCell(v: Cell): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

const COMMA = 44;
const NEWLINE = 10;
const MINUS = 45;
const ZERO = 48;
/** Room for the longest cell that is not a cached string (a double's text is at most ~25 bytes). */
const CELL_ROOM = 32;
/**
 * Slack past the chunk's end for the row that crosses it: rows are a few hundred bytes, so the
 * buffer grows only for a row of huge text cells, not once per chunk.
 */
const ROW_ROOM = 64 * 1024;

/**
 * Rows as UTF-8 CSV in chunks of about `chunkBytes`, each ending at a line end. Per row it
 * allocates nothing: integers are written digit by digit, and a string cell (an action, a
 * stream, a frame: few distinct values repeated millions of times) is escaped and encoded once.
 * A table of 10M rows is then as fast to print as its columns are to read.
 */
export class CsvBytes {
  private buf: Uint8Array;
  private pos = 0;
  private readonly encoded = new Map<string, Uint8Array>();
  private readonly encoder = new TextEncoder();

  constructor(private readonly chunkBytes = 1 << 20) {
    this.buf = new Uint8Array(chunkBytes + ROW_ROOM);
  }

  /** Appends one row; returns a full chunk (to be written out) or undefined. */
  row(device: number, table: RowTable, row: number): Uint8Array | undefined {
    let buf = this.buf;
    let pos = writeInt(buf, this.pos, device);
    const n = table.columns.length;
    for (let c = 0; c < n; c++) {
      const v = table.cell(row, c);
      buf[pos++] = COMMA;
      if (v === null) continue;
      if (typeof v === 'number' && Number.isSafeInteger(v)) {
        pos = writeInt(buf, pos, v);
        if (pos + CELL_ROOM > buf.length) buf = this.grow(pos, CELL_ROOM);
      } else {
        const bytes = this.encodedCell(v);
        if (pos + bytes.length + CELL_ROOM > buf.length) buf = this.grow(pos, bytes.length + CELL_ROOM);
        buf.set(bytes, pos);
        pos += bytes.length;
      }
    }
    buf[pos++] = NEWLINE;
    this.pos = pos;
    return pos >= this.chunkBytes ? this.take() : undefined;
  }

  /** Appends text as it stands (a header line, say). */
  text(line: string): Uint8Array | undefined {
    this.bytes(this.encoder.encode(`${line}\n`));
    return this.pos >= this.chunkBytes ? this.take() : undefined;
  }

  /** What is buffered, as one chunk (empty when nothing is). */
  take(): Uint8Array {
    const chunk = this.buf.subarray(0, this.pos);
    // The chunk is handed to a writer that may hold it until written: never reuse its bytes.
    this.buf = new Uint8Array(this.chunkBytes + ROW_ROOM);
    this.pos = 0;
    return chunk;
  }

  private encodedCell(v: string | number): Uint8Array {
    if (typeof v === 'number') return this.encoder.encode(csvCell(v));
    let bytes = this.encoded.get(v);
    if (bytes === undefined) {
      bytes = this.encoder.encode(csvCell(v));
      this.encoded.set(v, bytes);
    }
    return bytes;
  }

  /** Appends bytes, growing the buffer when they do not fit. */
  private bytes(b: Uint8Array): void {
    if (this.pos + b.length + CELL_ROOM > this.buf.length) this.grow(this.pos, b.length + CELL_ROOM);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A bigger buffer holding the `used` bytes written so far: a row may run past the chunk's end. */
  private grow(used: number, need: number): Uint8Array {
    const bigger = new Uint8Array(Math.max(this.buf.length * 2, used + need));
    bigger.set(this.buf.subarray(0, used));
    this.buf = bigger;
    return bigger;
  }
}

/**
 * Writes a safe integer as String() would, returning the new position: in 8-digit groups so the
 * arithmetic stays in int32 (a 48-bit address or a microsecond clock has 15-16 digits).
 */
function writeInt(buf: Uint8Array, pos: number, v: number): number {
  if (v < 0) {
    buf[pos++] = MINUS;
    v = -v;
  }
  if (v < 1e8) return writeSmall(buf, pos, v | 0, 0);
  const high = Math.floor(v / 1e8);
  if (high < 1e8) pos = writeSmall(buf, pos, high | 0, 0);
  else {
    pos = writeSmall(buf, pos, Math.floor(high / 1e8) | 0, 0);
    pos = writeSmall(buf, pos, (high % 1e8) | 0, 8);
  }
  return writeSmall(buf, pos, (v - high * 1e8) | 0, 8);
}

/** Writes 0 <= v < 1e8, zero-padded to `width` digits (0: none), two digits a step. */
function writeSmall(buf: Uint8Array, pos: number, v: number, width: number): number {
  const end = pos + Math.max(width, digitCount(v));
  let p = end;
  while (v >= 100) {
    const q = (v / 100) | 0;
    const pair = (v - q * 100) << 1;
    buf[--p] = DIGIT_PAIRS[pair + 1]!;
    buf[--p] = DIGIT_PAIRS[pair]!;
    v = q;
  }
  if (v >= 10) {
    buf[--p] = DIGIT_PAIRS[(v << 1) + 1]!;
    buf[--p] = DIGIT_PAIRS[v << 1]!;
  } else buf[--p] = ZERO + v;
  while (p > pos) buf[--p] = ZERO;
  return end;
}

/** "00".."99" as ASCII byte pairs. */
const DIGIT_PAIRS = Uint8Array.from({ length: 200 }, (_, i) =>
  i & 1 ? ZERO + ((i >> 1) % 10) : ZERO + Math.floor((i >> 1) / 10),
);

/** Decimal digits of 0 <= v < 1e8. */
function digitCount(v: number): number {
  if (v < 1e4) return v < 10 ? 1 : v < 100 ? 2 : v < 1e3 ? 3 : 4;
  return v < 1e5 ? 5 : v < 1e6 ? 6 : v < 1e7 ? 7 : 8;
}

/** Header and rows as UTF-8 chunks of about `chunkBytes` bytes, split only between lines. */
export function* csvByteChunks(
  device: number,
  table: RowTable,
  rows: ArrayLike<number>,
  opts: { header: boolean; chunkBytes?: number },
): Generator<Uint8Array> {
  const out = new CsvBytes(opts.chunkBytes);
  if (opts.header) {
    const chunk = out.text(csvHeader(table));
    if (chunk) yield chunk;
  }
  for (let i = 0; i < rows.length; i++) {
    const chunk = out.row(device, table, rows[i]!);
    if (chunk) yield chunk;
  }
  const rest = out.take();
  if (rest.length > 0) yield rest;
}

/**
 * Header and rows as newline-terminated strings of about `chunkChars` bytes: a table of
 * millions of rows is longer than the longest string a JS engine will build.
 */
export function csvChunks(
  device: number,
  table: RowTable,
  rows: ArrayLike<number>,
  chunkChars = 1 << 20,
): string[] {
  const decoder = new TextDecoder();
  return Array.from(csvByteChunks(device, table, rows, { header: true, chunkBytes: chunkChars }), (c) =>
    decoder.decode(c),
  );
}
