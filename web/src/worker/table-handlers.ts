import { unreleasedIds, windowEntries } from '../../../src/engine/analyses/leaks/index.js';
import { SnapshotError } from '../../../src/engine/base/index.js';
import { searchAllocations } from '../../../src/engine/derived/index.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/index.js';
import {
  BLOCK_STATES,
  blockTable,
  csvChunks,
  eventTable,
  positionOf,
  type RowTable,
  selectRows,
  tablePage,
} from '../../../src/engine/views/tables/index.js';
import type { TableKind, TableQueries, TableSelected, TableSpec } from './table-protocol.js';

/**
 * The worker's side of the tables: the engine's own event/block tables and row selection
 * (the CLI's `memlens events/blocks`), with the current permutation of each table kept here so
 * the page only ever asks for the rows on screen.
 */
interface Selected {
  snapshot: Snapshot;
  version: number;
  table: RowTable;
  rows: Int32Array;
}

type Handlers = {
  [K in keyof TableQueries]: (args: TableQueries[K]['args']) => TableQueries[K]['result'];
};

export function tableHandlers(current: () => Snapshot, deviceOf: (device: number) => DeviceModel): Handlers {
  const selected = new Map<string, Selected>();
  const tables = new WeakMap<DeviceModel, Partial<Record<TableKind, RowTable>>>();
  let versions = 0;

  const tableOf = (d: DeviceModel, kind: TableKind): RowTable => {
    const byKind = tables.get(d) ?? {};
    tables.set(d, byKind);
    byKind[kind] ??= (kind === 'events' ? eventTable : blockTable)(current(), d);
    return byKind[kind];
  };
  const selectedOf = (device: number, kind: TableKind, version: number): Selected => {
    const sel = selected.get(`${device}:${kind}`);
    if (sel === undefined || sel.version !== version || sel.snapshot !== current())
      throw new SnapshotError('the table changed; showing the newer selection');
    return sel;
  };

  return {
    table: ({ device, spec }) => {
      const d = deviceOf(device);
      const table = tableOf(d, spec.kind);
      const rows = selectRows(table, {
        filter: spec.filter,
        ...(spec.sort ? { sort: spec.sort } : {}),
        ...(spec.unreleased ? { within: unreleasedWithin(d, spec.unreleased) } : {}),
      });
      const version = ++versions;
      selected.set(`${device}:${spec.kind}`, { snapshot: current(), version, table, rows });
      const categories = spec.kind === 'events' ? current().traceColumns.actionNames : BLOCK_STATES;
      return {
        version,
        columns: [...table.columns],
        total: table.length,
        count: rows.length,
        categories: [...categories],
        bytes: spec.kind === 'blocks' ? requestedBytes(d, rows) : null,
      };
    },
    tableRows: ({ device, kind, version, from, to }) => {
      const sel = selectedOf(device, kind, version);
      return { version, ...tablePage(sel.table, sel.rows, from, to) };
    },
    tablePosition: ({ device, kind, version, row }) =>
      positionOf(selectedOf(device, kind, version).rows, row),
    tableCsv: ({ device, kind, version }) => {
      const sel = selectedOf(device, kind, version);
      return csvChunks(device, sel.table, sel.rows);
    },
    search: ({ device, term }) => ({ term, ids: searchAllocations(current(), deviceOf(device), term) }),
  };
}

/** Requested bytes of the selected blocks (a block row's id is its allocation's): one pass over the rows. */
function requestedBytes(d: DeviceModel, rows: Int32Array): TableSelected['bytes'] {
  if (rows.length === 0) return null;
  const size = d.allocations.size;
  let total = 0;
  let max = Number.NEGATIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rows.length; i++) {
    const b = size[rows[i]!]!;
    total += b;
    if (b > max) max = b;
    if (b < min) min = b;
  }
  return { total, max, min };
}

/** A timeline window (entry i spans [i, i+1) on the entry axis) as the unreleased allocations' ids. */
function unreleasedWithin(d: DeviceModel, u: NonNullable<TableSpec['unreleased']>): number[] {
  const [x0, x1] = u.window;
  const [from, to] =
    u.axis === 'entry'
      ? windowEntries(d, { entries: [Math.floor(x0), Math.ceil(x1) - 1] })
      : windowEntries(d, { timeUs: [x0, x1] });
  return unreleasedIds(d, from, to);
}
