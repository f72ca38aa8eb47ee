import { closeSync, openSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';

/**
 * The smallest Parquet file DuckDB reads: one row group, one PLAIN, uncompressed page a column.
 * The export stages each batch this way and lets DuckDB's COPY cast, compress and write the real
 * file: a number column goes to disk straight from its typed array, no copy in JavaScript, where
 * DuckDB's appender cost ~20 ns a value (measured: the largest part of an export's time). Not a
 * general writer: no statistics, no dictionaries, no nesting.
 */
export type StagedColumn =
  | { name: string; kind: 'double'; values: Float64Array }
  | { name: string; kind: 'int32'; values: Int32Array }
  /** Text, null where null: an OPTIONAL column whose definition levels say which rows hold one. */
  | { name: string; kind: 'text'; values: readonly (string | null)[] };

const MAGIC = Buffer.from('PAR1');
// parquet.thrift's enums.
const PHYSICAL = { int32: 1, double: 5, text: 6 } as const;
const REQUIRED = 0;
const OPTIONAL = 1;
const UTF8 = 0;
const PLAIN = 0;
const RLE = 3;
const DATA_PAGE = 0;
const UNCOMPRESSED = 0;
// Thrift compact protocol's field types.
const I32 = 5;
const I64 = 6;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

export function writePlainParquet(file: string, rows: number, columns: readonly StagedColumn[]): void {
  // PLAIN numbers are little-endian: the typed arrays' own bytes are written as they are.
  if (endianness() !== 'LE') throw new Error('Parquet staging needs a little-endian machine');
  const fd = openSync(file, 'w');
  try {
    let offset = 0;
    const write = (bytes: Uint8Array) => {
      try {
        for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
      } catch (e) {
        // writeSync's errors name no file: a full staging disk must be named, not taken for another.
        const err = e as NodeJS.ErrnoException;
        if (err.path === undefined) {
          err.path = file;
          err.message = `${err.message} (${file})`;
        }
        throw err;
      }
      offset += bytes.length;
    };
    write(MAGIC);
    const chunks: { column: StagedColumn; start: number; bytes: number }[] = [];
    if (rows > 0) {
      for (const column of columns) {
        const body = pageBody(column, rows);
        const size = body.reduce((n, b) => n + b.length, 0);
        const header = new Compact();
        header.i32(1, DATA_PAGE).i32(2, size).i32(3, size);
        header.struct(5, () => header.i32(1, rows).i32(2, PLAIN).i32(3, RLE).i32(4, RLE));
        const start = offset;
        write(header.done());
        for (const b of body) write(b);
        chunks.push({ column, start, bytes: offset - start });
      }
    }
    const footer = fileMetadata(rows, columns, chunks);
    write(footer);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length, 0);
    write(length);
    write(MAGIC);
  } finally {
    closeSync(fd);
  }
}

function pageBody(c: StagedColumn, rows: number): Uint8Array[] {
  if (c.kind !== 'text') {
    const v = c.values.subarray(0, rows);
    return [new Uint8Array(v.buffer, v.byteOffset, v.byteLength)];
  }
  // Definition levels (1: a value, 0: null) as RLE runs, after their byte length; then the values.
  const levels = new Compact();
  for (let r = 0; r < rows; ) {
    const level = c.values[r] === null ? 0 : 1;
    let end = r + 1;
    while (end < rows && (c.values[end] === null ? 0 : 1) === level) end++;
    levels.varint((end - r) * 2);
    levels.byte(level);
    r = end;
  }
  const runs = levels.bytes();
  const runLength = Buffer.alloc(4);
  runLength.writeUInt32LE(runs.length, 0);
  return [runLength, runs, textValues(c.values, rows)];
}

/**
 * PLAIN byte arrays (a 4-byte length, then the UTF-8 bytes) of the non-null values, in one buffer:
 * a buffer and a write for each value cost ~0.25 s for the annotations of the 1 GB synthetic file.
 */
function textValues(values: readonly (string | null)[], rows: number): Buffer {
  let size = 0;
  for (let r = 0; r < rows; r++) {
    const v = values[r];
    if (v !== null && v !== undefined) size += 4 + Buffer.byteLength(v, 'utf8');
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let r = 0; r < rows; r++) {
    const v = values[r];
    if (v === null || v === undefined) continue;
    const n = out.write(v, at + 4, 'utf8');
    out.writeUInt32LE(n, at);
    at += 4 + n;
  }
  return out;
}

function fileMetadata(
  rows: number,
  columns: readonly StagedColumn[],
  chunks: readonly { column: StagedColumn; start: number; bytes: number }[],
): Uint8Array {
  const m = new Compact();
  m.i32(1, 1);
  m.list(2, STRUCT, columns.length + 1, (k) => {
    if (k === 0) {
      m.string(4, 'schema').i32(5, columns.length);
      return;
    }
    const c = columns[k - 1]!;
    m.i32(1, PHYSICAL[c.kind])
      .i32(3, c.kind === 'text' ? OPTIONAL : REQUIRED)
      .string(4, c.name);
    if (c.kind === 'text') m.i32(6, UTF8);
  });
  m.i64(3, rows);
  m.list(4, STRUCT, chunks.length > 0 ? 1 : 0, () => {
    m.list(1, STRUCT, chunks.length, (k) => {
      const { column, start, bytes } = chunks[k]!;
      m.i64(2, start);
      m.struct(3, () => {
        m.i32(1, PHYSICAL[column.kind]);
        m.list(2, I32, 2, (e) => m.varint(zigzag(e === 0 ? PLAIN : RLE)));
        m.list(3, BINARY, 1, () => m.binary(column.name));
        m.i32(4, UNCOMPRESSED).i64(5, rows).i64(6, bytes).i64(7, bytes).i64(9, start);
      });
    });
    m.i64(
      2,
      chunks.reduce((n, c) => n + c.bytes, 0),
    ).i64(3, rows);
  });
  m.string(6, 'memlens export staging');
  return m.done();
}

const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);

/** Thrift's compact protocol, the few parts a Parquet footer and page header use. */
class Compact {
  private readonly out: number[] = [];
  private last = 0;

  byte(b: number): this {
    this.out.push(b);
    return this;
  }

  /** Unsigned LEB128; numbers up to 2^53 (file offsets, row counts), hence no bit operators. */
  varint(n: number): this {
    let v = n;
    while (v >= 128) {
      this.out.push((v % 128) + 128);
      v = Math.floor(v / 128);
    }
    this.out.push(v);
    return this;
  }

  binary(text: string): this {
    const b = Buffer.from(text, 'utf8');
    this.varint(b.length);
    for (const x of b) this.out.push(x);
    return this;
  }

  i32(id: number, v: number): this {
    return this.field(id, I32).varint(zigzag(v));
  }

  i64(id: number, v: number): this {
    return this.field(id, I64).varint(zigzag(v));
  }

  string(id: number, text: string): this {
    return this.field(id, BINARY).binary(text);
  }

  struct(id: number, fill: () => void): this {
    this.field(id, STRUCT);
    return this.nested(fill);
  }

  /** A list of `n` elements of `type`; `each` writes element k (a struct's fields, or a value). */
  list(id: number, type: number, n: number, each: (k: number) => void): this {
    this.field(id, LIST);
    if (n < 15) this.out.push((n << 4) | type);
    else this.byte(0xf0 | type).varint(n);
    for (let k = 0; k < n; k++) {
      if (type === STRUCT) this.nested(() => each(k));
      else each(k);
    }
    return this;
  }

  bytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }

  /** The top-level struct, ended. */
  done(): Uint8Array {
    this.out.push(0);
    return this.bytes();
  }

  private nested(fill: () => void): this {
    const outer = this.last;
    this.last = 0;
    fill();
    this.out.push(0);
    this.last = outer;
    return this;
  }

  private field(id: number, type: number): this {
    const delta = id - this.last;
    if (delta > 0 && delta <= 15) this.out.push((delta << 4) | type);
    else this.byte(type).varint(zigzag(id));
    this.last = id;
    return this;
  }
}
