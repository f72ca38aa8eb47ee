import type { Cell, RowTable } from './tables.js';

/**
 * A table's rows as UTF-8 bytes in chunks of about `chunkBytes`, each ending at a row's end, in
 * a format (CSV, JSON lines) given as the bytes around cells. Per row it allocates nothing:
 * integers are written digit by digit, and a string cell (an action, a stream, a frame: few
 * distinct values repeated millions of times) is escaped and encoded once. A table of 10M rows
 * is then about as fast to print as its columns are to read.
 */
export interface RowFormat {
  /** Bytes before a row's first cell, given the row's device and whether it is the first row. */
  rowStart(device: number, first: boolean): string;
  /** Bytes before cell `c` (a separator, a key). */
  beforeCell(c: number): string;
  rowEnd: string;
  /** A null cell, and any other cell that is not a safe integer, as text. */
  text(v: string | number | null): string;
}

const MINUS = 45;
const ZERO = 48;
/** Room for the longest cell that is not a cached string (a double's text is at most ~25 bytes). */
const CELL_ROOM = 32;
/**
 * Slack past the chunk's end for the row that crosses it: rows are a few hundred bytes, so the
 * buffer grows only for a row of huge text cells, not once per chunk.
 */
const ROW_ROOM = 64 * 1024;

export class RowBytes {
  private buf: Uint8Array;
  /** The same bytes as buf, for four-digit stores. */
  private view: DataView;
  private pos = 0;
  private readonly encoded = new Map<string | null, Uint8Array>();
  private readonly encoder = new TextEncoder();
  private readonly before: Uint8Array[];
  private readonly end: Uint8Array;
  private rows = 0;
  /** rowStart's bytes for the last device seen (first row, other rows). */
  private startDevice = Number.NaN;
  private starts: [Uint8Array, Uint8Array] = [new Uint8Array(0), new Uint8Array(0)];
  /** Free bytes kept after each cell (see startsFor). */
  private room = CELL_ROOM;

  constructor(
    private readonly table: RowTable,
    private readonly format: RowFormat,
    private readonly chunkBytes = 1 << 20,
  ) {
    this.buf = new Uint8Array(chunkBytes + ROW_ROOM);
    this.view = new DataView(this.buf.buffer);
    this.before = table.columns.map((_, c) => this.encoder.encode(format.beforeCell(c)));
    this.end = this.encoder.encode(format.rowEnd);
  }

  /** Appends one row; returns a full chunk (to be written out) or undefined. */
  row(device: number, row: number): Uint8Array | undefined {
    if (device !== this.startDevice) this.startsFor(device);
    const room = this.room;
    let buf = this.buf;
    let view = this.view;
    let pos = copy(buf, this.pos, this.starts[this.rows++ === 0 ? 0 : 1]);
    const n = this.before.length;
    for (let c = 0; c < n; c++) {
      const v = this.table.cell(row, c);
      pos = copy(buf, pos, this.before[c]!);
      if (typeof v === 'number' && Number.isSafeInteger(v)) {
        pos = writeInt(buf, view, pos, v);
        if (pos + room > buf.length) {
          buf = this.grow(pos, room);
          view = this.view;
        }
      } else {
        const bytes = this.encodedCell(v);
        if (pos + bytes.length + room > buf.length) {
          buf = this.grow(pos, bytes.length + room);
          view = this.view;
        }
        buf.set(bytes, pos);
        pos += bytes.length;
      }
    }
    this.pos = copy(buf, pos, this.end);
    return this.pos >= this.chunkBytes ? this.take() : undefined;
  }

  private startsFor(device: number): void {
    this.startDevice = device;
    const [first, rest] = [true, false].map((f) => this.encoder.encode(this.format.rowStart(device, f)));
    this.starts = [first!, rest!];
    // The fixed bytes that can follow a cell before the next check: a row's end and the next row's
    // start, or the next cell's key, then an integer.
    const longest = Math.max(first!.length + this.end.length, ...this.before.map((b) => b.length));
    this.room = CELL_ROOM + longest;
    if (this.pos + this.room > this.buf.length) this.grow(this.pos, this.room);
  }

  /** Appends text as it stands (a header line, say). */
  text(line: string): Uint8Array | undefined {
    this.bytes(this.encoder.encode(line));
    return this.pos >= this.chunkBytes ? this.take() : undefined;
  }

  /** What is buffered, as one chunk (empty when nothing is). */
  take(): Uint8Array {
    const chunk = this.buf.subarray(0, this.pos);
    // The chunk is handed to a writer that may hold it until written: never reuse its bytes.
    this.buf = new Uint8Array(this.chunkBytes + ROW_ROOM);
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
    return chunk;
  }

  private encodedCell(v: Cell): Uint8Array {
    if (typeof v === 'number') return this.encoder.encode(this.format.text(v));
    let bytes = this.encoded.get(v);
    if (bytes === undefined) {
      bytes = this.encoder.encode(this.format.text(v));
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
    this.view = new DataView(bigger.buffer);
    return bigger;
  }
}

/** Copies `bytes` to `buf` at `pos`; returns the position after them (a loop: they are short). */
function copy(buf: Uint8Array, pos: number, bytes: Uint8Array): number {
  for (let k = 0; k < bytes.length; k++) buf[pos++] = bytes[k]!;
  return pos;
}

/** A header (if any) and the rows as chunks of about `chunkBytes` bytes, split only between rows. */
export function* rowChunks(
  table: RowTable,
  format: RowFormat,
  device: number,
  rows: ArrayLike<number>,
  opts: { header?: string; chunkBytes?: number } = {},
): Generator<Uint8Array> {
  const out = new RowBytes(table, format, opts.chunkBytes);
  if (opts.header !== undefined) {
    const chunk = out.text(opts.header);
    if (chunk) yield chunk;
  }
  for (let i = 0; i < rows.length; i++) {
    const chunk = out.row(device, rows[i]!);
    if (chunk) yield chunk;
  }
  const rest = out.take();
  if (rest.length > 0) yield rest;
}

/**
 * Writes a safe integer as String() would, returning the new position. 8-digit halves keep the
 * arithmetic in int32 (a 48-bit address or a microsecond clock has 15-16 digits), and digits are
 * stored four at a time from a table: a quarter of the divisions and stores of a digit loop.
 */
function writeInt(buf: Uint8Array, view: DataView, pos: number, v: number): number {
  if (v < 0) {
    buf[pos++] = MINUS;
    v = -v;
  }
  if (v < 1e8) return writeUpTo8(buf, view, pos, v | 0);
  // A safe integer is below 2^53 < 1e16: its high half has at most 8 digits.
  const high = Math.floor(v / 1e8);
  const low = (v - high * 1e8) | 0;
  pos = writeUpTo8(buf, view, pos, high | 0);
  const mid = (low / 1e4) | 0;
  view.setUint32(pos, DIGIT_QUADS[mid]!, true);
  view.setUint32(pos + 4, DIGIT_QUADS[low - mid * 1e4]!, true);
  return pos + 8;
}

/** Writes 0 <= v < 1e8 without leading zeros. */
function writeUpTo8(buf: Uint8Array, view: DataView, pos: number, v: number): number {
  if (v < 1e4) return writeUpTo4(buf, pos, v);
  const high = (v / 1e4) | 0;
  pos = writeUpTo4(buf, pos, high);
  view.setUint32(pos, DIGIT_QUADS[v - high * 1e4]!, true);
  return pos + 4;
}

/** Writes 0 <= v < 1e4 without leading zeros: the last 1-4 bytes of its quad. */
function writeUpTo4(buf: Uint8Array, pos: number, v: number): number {
  const quad = DIGIT_QUADS[v]!;
  for (let shift = v >= 1000 ? 0 : v >= 100 ? 8 : v >= 10 ? 16 : 24; shift < 32; shift += 8)
    buf[pos++] = (quad >>> shift) & 0xff;
  return pos;
}

/** "0000".."9999" as four ASCII bytes in a little-endian uint32 (first digit lowest). */
const DIGIT_QUADS = Uint32Array.from(
  { length: 10000 },
  (_, i) =>
    (ZERO + Math.floor(i / 1000)) |
    ((ZERO + (Math.floor(i / 100) % 10)) << 8) |
    ((ZERO + (Math.floor(i / 10) % 10)) << 16) |
    ((ZERO + (i % 10)) << 24),
);
