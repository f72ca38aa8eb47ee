import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import {
  parseAddress,
  searchAllocations,
} from '../../../../src/engine/derived/allocation/allocation-search.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { csvChunks, csvHeader, csvRow } from '../../../../src/engine/views/tables/table-csv.js';
import { positionOf, tablePage } from '../../../../src/engine/views/tables/table-window.js';
import { blockTable, type Cell, eventTable, selectRows } from '../../../../src/engine/views/tables/tables.js';

/** The web tables' engine side: sort order, the `within` row subset, pages, CSV chunks, search. */
describe('table selection for the web tables', () => {
  const s = loadSnapshotBytes(generateSnapshotBytes({ events: 6000, seed: 23, streams: 1 }).bytes);
  const d = s.devices[0]!;
  const events = eventTable(s, d);
  const blocks = blockTable(s, d);

  /** Keys in order, ties in row order: the sort's whole contract. */
  const expectSorted = (cells: Cell[], rows: Int32Array, descending: boolean) => {
    const wrong: number[] = [];
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [cells[i - 1]!, cells[i]!];
      const ok =
        a === b
          ? rows[i]! > rows[i - 1]!
          : a === null || b === null
            ? (descending ? b : a) === null
            : descending
              ? a > b
              : a < b;
      if (!ok) wrong.push(i);
    }
    expect(wrong).toEqual([]);
  };

  it('sorts every column both ways, nulls first ascending, ties in row order', () => {
    for (const table of [events, blocks]) {
      for (const [c, name] of table.columns.entries()) {
        for (const spec of [name, `-${name}`]) {
          const rows = selectRows(table, { sort: spec });
          expect(rows.length).toBe(table.length);
          expectSorted(
            Array.from(rows, (r) => table.cell(r, c)),
            rows,
            spec.startsWith('-'),
          );
        }
      }
    }
  });

  it('keeps only the rows given in `within`, still filtered and sorted', () => {
    const within = [3, 10, 11, 500, 4000, 5999];
    const rows = selectRows(events, { within, filter: ['action=alloc'], sort: '-size' });
    const expected = within.filter((r) => events.cell(r, 1) === 'alloc');
    expect([...rows].sort((a, b) => a - b)).toEqual(expected);
  });

  it('serves a page of rows with their cells, and finds a row’s position', () => {
    const rows = selectRows(blocks, { sort: '-size' });
    const page = tablePage(blocks, rows, 100, 150);
    expect(page.from).toBe(100);
    expect([...page.ids]).toEqual([...rows.subarray(100, 150)]);
    expect(page.cells[7]).toEqual(blocks.columns.map((_, c) => blocks.cell(rows[107]!, c)));
    expect(positionOf(rows, rows[123]!)).toBe(123);
    expect(tablePage(blocks, rows, rows.length - 2, rows.length + 50).ids.length).toBe(2);
  });

  it('CSV chunks are the header and one line per row, split only between lines', () => {
    const rows = selectRows(events, { filter: ['size>=65536'] });
    const chunks = csvChunks(0, events, rows, 4096);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c.endsWith('\n')).toBe(true);
    const lines = chunks.join('').trimEnd().split('\n');
    expect(lines[0]).toBe(csvHeader(events));
    expect(lines.slice(1)).toEqual(Array.from(rows, (r) => csvRow(0, events, r)));
  });

  it('an address finds exactly the allocations whose bytes contain it', () => {
    const a = d.allocations;
    for (const id of [0, 7, Math.floor(a.count / 2), a.count - 1]) {
      const inside = a.addr[id]! + Math.floor(a.size[id]! / 2);
      const found = searchAllocations(s, d, `0x${inside.toString(16)}`);
      expect([...found]).toContain(id);
      for (const f of found) {
        expect(a.addr[f]!).toBeLessThanOrEqual(inside);
        expect(inside === a.addr[f]! || inside < a.addr[f]! + a.size[f]!).toBe(true);
      }
      expect(searchAllocations(s, d, String(inside))).toEqual(found);
    }
    expect(parseAddress('0x10')).toBe(16);
    expect(parseAddress('model.py')).toBeNull();
  });

  it('frame text finds the allocations with that frame anywhere in their stack, ignoring case', () => {
    const a = d.allocations;
    const frame = s.stacks.frames(a.stack[a.count - 1]!).at(-1)!; // outermost frame of some stack
    const found = new Set(searchAllocations(s, d, frame.name.toUpperCase()));
    expect(found.size).toBeGreaterThan(0);
    for (let id = 0; id < a.count; id++) {
      const hit = s.stacks
        .frames(a.stack[id]!)
        .some((f) => `${f.name} (${f.filename}:${f.line})`.toLowerCase().includes(frame.name.toLowerCase()));
      expect(found.has(id)).toBe(hit);
    }
    expect(searchAllocations(s, d, '  ').length).toBe(0);
  });
});
