import { type RowFormat, rowChunks } from './table-bytes.js';
import type { Cell, RowTable } from './tables.js';

/**
 * The tables as CSV, one writer for the CLI (`memlens events/blocks --format csv`) and the web
 * app's export, so a filtered table exported from the page reads exactly as the CLI prints it.
 * csvCell defines how a cell reads; csvByteChunks writes the same text straight into bytes.
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

const CSV: RowFormat = {
  rowStart: (device) => String(device),
  beforeCell: () => ',',
  rowEnd: '\n',
  text: csvCell,
};

/** Header and rows as UTF-8 chunks of about `chunkBytes` bytes, split only between lines. */
export function csvByteChunks(
  device: number,
  table: RowTable,
  rows: ArrayLike<number>,
  opts: { header: boolean; chunkBytes?: number },
): Generator<Uint8Array> {
  const header = opts.header ? `${csvHeader(table)}\n` : undefined;
  return rowChunks(table, CSV, device, rows, {
    ...(header === undefined ? {} : { header }),
    ...(opts.chunkBytes === undefined ? {} : { chunkBytes: opts.chunkBytes }),
  });
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
