import { type RowFormat, rowChunks } from './table-bytes.js';
import type { Cell, RowTable } from './tables.js';

/**
 * A table's rows as JSON objects, one per line, comma-separated ({column: value, ...}, as
 * JSON.stringify writes them): the `rows` array of `memlens events/blocks --format json`.
 */
function jsonFormat(table: RowTable): RowFormat {
  const keys = table.columns.map((name, c) => `${c === 0 ? '{' : ','}${JSON.stringify(name)}:`);
  return {
    rowStart: (_device, first) => (first ? '' : ','),
    beforeCell: (c) => keys[c]!,
    rowEnd: '}\n',
    text: jsonCell,
  };
}

/** A cell as JSON.stringify writes it inside an object (NaN and infinities become null). */
export function jsonCell(v: Cell): string {
  return JSON.stringify(v) ?? 'null';
}

/** The rows (as JSON objects, one a line, comma-separated) in UTF-8 chunks of about `chunkBytes`. */
export function jsonRowChunks(
  table: RowTable,
  rows: ArrayLike<number>,
  chunkBytes?: number,
): Generator<Uint8Array> {
  return rowChunks(table, jsonFormat(table), 0, rows, chunkBytes === undefined ? {} : { chunkBytes });
}
