import type { Cell, RowTable } from './tables.js';

/**
 * The tables as CSV, one writer for the CLI (`memlens events/blocks --format csv`) and the web
 * app's export, so a filtered table exported from the page reads exactly as the CLI prints it.
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

/**
 * Header and rows as newline-terminated chunks of about `chunkChars` characters: a table of
 * millions of rows is longer than the longest string a JS engine will build.
 */
export function csvChunks(
  device: number,
  table: RowTable,
  rows: ArrayLike<number>,
  chunkChars = 1 << 20,
): string[] {
  const chunks: string[] = [];
  let lines: string[] = [csvHeader(table)];
  let size = 0;
  for (let i = 0; i < rows.length; i++) {
    const line = csvRow(device, table, rows[i]!);
    lines.push(line);
    size += line.length + 1;
    if (size > chunkChars) {
      chunks.push(`${lines.join('\n')}\n`);
      lines = [];
      size = 0;
    }
  }
  if (lines.length > 0) chunks.push(`${lines.join('\n')}\n`);
  return chunks;
}
