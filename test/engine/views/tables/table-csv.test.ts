import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { csvByteChunks, csvHeader, csvRow } from '../../../../src/engine/views/tables/table-csv.js';
import { jsonRowChunks } from '../../../../src/engine/views/tables/table-json.js';
import {
  blockTable,
  type Cell,
  eventTable,
  type RowTable,
  selectRows,
} from '../../../../src/engine/views/tables/tables.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = (() => {
  try {
    return readdirSync(CORPUS).filter((f) => f.endsWith('.pickle'));
  } catch {
    return [];
  }
})();

/** The byte writer's text, which must equal the header and csvRow's lines (csvCell is the spec). */
function viaBytes(table: RowTable, rows: ArrayLike<number>, chunkBytes: number): string {
  const decoder = new TextDecoder();
  const chunks = [...csvByteChunks(3, table, rows, { header: true, chunkBytes })];
  for (const c of chunks) expect(c[c.length - 1]).toBe(10);
  return chunks.map((c) => decoder.decode(c)).join('');
}

const expected = (table: RowTable, rows: ArrayLike<number>) =>
  [csvHeader(table), ...Array.from(rows, (r) => csvRow(3, table, r))].map((line) => `${line}\n`).join('');

describe('table rows as bytes (CSV and JSON)', () => {
  it('writes every kind of cell exactly as csvCell reads it, across chunk ends', () => {
    const values: Cell[] = [
      0,
      7,
      10,
      99,
      100,
      1e8 - 1,
      1e8,
      1e8 + 1,
      123456789012345,
      2 ** 53 - 1,
      1e16,
      -1,
      -1e9 - 7,
      -0,
      0.5,
      -2.25,
      1e21,
      2 ** 53 + 2,
      Number.NaN,
      null,
      '',
      'plain',
      'a,b',
      'say "hi"',
      'two\nlines',
      'ünïcødé 内存',
      'x'.repeat(5000),
      'y'.repeat(100_000),
    ];
    const table: RowTable = {
      columns: ['a', `long_${'b'.repeat(60)}`, 'c'],
      length: values.length,
      cell: (row, c) => values[(row + c * 7) % values.length]!,
    };
    const rows = Int32Array.from({ length: values.length * 3 }, (_, i) => i % values.length);
    for (const chunk of [16, 100, 1 << 20]) {
      expect(viaBytes(table, rows, chunk) === expected(table, rows), `chunks of ${chunk}`).toBe(true);
    }
    // The same cells as JSON rows: what JSON.stringify writes for each row's object.
    const objects = Array.from(rows, (r) =>
      JSON.stringify(Object.fromEntries(table.columns.map((name, c) => [name, table.cell(r, c)]))),
    );
    for (const chunk of [16, 1 << 20]) {
      const decoder = new TextDecoder();
      const text = [...jsonRowChunks(table, rows, chunk)].map((c) => decoder.decode(c)).join('');
      expect(text === `${objects.join('\n,')}\n`, `JSON chunks of ${chunk}`).toBe(true);
      expect(JSON.parse(`[${text}]`)).toHaveLength(rows.length);
    }
  });

  it('matches csvRow on a generated snapshot, events and blocks, filtered and sorted', () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 4000, seed: 8, streams: 2 }).bytes);
    const d = s.devices[0]!;
    for (const table of [eventTable(s, d), blockTable(s, d)]) {
      for (const sel of [{}, { filter: ['size>=65536'], sort: '-size' }]) {
        const rows = selectRows(table, sel);
        expect(rows.length).toBeGreaterThan(10);
        expect(viaBytes(table, rows, 4096) === expected(table, rows)).toBe(true);
      }
    }
  });

  it.skipIf(corpus.length === 0)('matches csvRow on every corpus file', () => {
    for (const f of corpus) {
      const s = loadSnapshotBytes(readFileSync(join(CORPUS, f)));
      for (const d of s.devices) {
        for (const table of [eventTable(s, d), blockTable(s, d)]) {
          const rows = selectRows(table, {});
          expect(viaBytes(table, rows, 1 << 16) === expected(table, rows), f).toBe(true);
        }
      }
    }
  });
});
