import { closeSync, openSync, writeSync } from 'node:fs';
import type { ColumnSpec } from '../../engine/export/index.js';
import { type Batch, isText, numberAt } from '../../engine/export/index.js';
import { csvCell } from '../../engine/views/tables/index.js';

const ROWS_PER_WRITE = 8192;

/** One export table batch as CSV (header first, empty cell for null) or JSON lines (one object a row). */
export function writeTextBatch(
  specs: readonly ColumnSpec[],
  batch: Batch,
  format: 'csv' | 'jsonl',
  file: string,
): void {
  const fd = openSync(file, 'w');
  try {
    if (format === 'csv') writeSync(fd, `${specs.map((s) => s.name).join(',')}\n`);
    const keys = specs.map((s) => `${JSON.stringify(s.name)}:`);
    for (let from = 0; from < batch.rows; from += ROWS_PER_WRITE) {
      const lines: string[] = [];
      for (let r = from; r < Math.min(batch.rows, from + ROWS_PER_WRITE); r++) {
        const cells = batch.columns.map((c, i) => cell(c, r, specs[i]!, format));
        lines.push(format === 'csv' ? cells.join(',') : `{${cells.map((v, i) => keys[i] + v).join(',')}}`);
      }
      writeSync(fd, `${lines.join('\n')}\n`);
    }
  } finally {
    closeSync(fd);
  }
}

function cell(c: Batch['columns'][number], row: number, spec: ColumnSpec, format: 'csv' | 'jsonl'): string {
  if (isText(c)) {
    const code = c.codes[row]!;
    if (code < 0) return format === 'csv' ? '' : 'null';
    const text = c.dictionary[code]!;
    return format === 'csv' ? csvCell(text) : JSON.stringify(text);
  }
  const v = numberAt(c, row);
  if (Number.isNaN(v)) return format === 'csv' ? '' : 'null';
  if (spec.type === 'bool') return v === 1 ? 'true' : 'false';
  return String(v);
}
