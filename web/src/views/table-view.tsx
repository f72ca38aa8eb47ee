import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Cell, TablePage } from '../../../src/engine/views/tables/index.js';
import type { ViewState } from '../url-state.js';
import type { EngineClient } from '../worker/client.js';
import type { DeviceInfo } from '../worker/protocol.js';
import type { TableKind, TableSelected, TableSpec } from '../worker/table-protocol.js';
import { SpanPager, useRowSpans } from './row-spans.js';
import { CellView, HeaderRow } from './table-cells.js';
import { exportCsv } from './table-export.js';
import { EMPTY_FORM, type FilterForm, filtersOf } from './table-filters.js';
import { TableToolbar } from './table-toolbar.js';
import type { TableState } from './table-url.js';

interface Props {
  client: EngineClient;
  device: DeviceInfo;
  kind: TableKind;
  view: ViewState;
  update: (patch: Partial<ViewState>) => void;
}

const ROW_PX = 22;
/** The sticky header's height: rows start below it inside the scroller. */
const HEADER_PX = 24;
const PAGE_ROWS = 256;
/** Pages kept on either side of the visible ones. */
const KEEP_PAGES = 8;
/** Filters and sort survive switching tabs (the table unmounts). */
const remembered = new Map<TableKind, TableState>();

/**
 * The Events or Blocks table: the worker holds the selected rows' permutation; the page asks for
 * the pages on screen. A row click selects its entry/allocation everywhere; a selection made
 * elsewhere scrolls here to its row.
 */
export function TableView({ client, device, kind, view, update }: Props) {
  // The view state's table when it is this tab's (the table's own last write, a reload, a shared
  // link or a link from an analysis: all at least as new as what this session remembers), else
  // this session's last state of the tab (the view state holds the other tab's).
  const [initial] = useState(() => (view.table?.kind === kind ? view.table : (remembered.get(kind) ?? null)));
  const [form, setForm] = useState<FilterForm>(initial?.form ?? EMPTY_FORM);
  const [sort, setSort] = useState<string | null>(initial?.sort ?? null);
  const [selected, setSelected] = useState<TableSelected | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The worker is selecting or sorting (seconds on tens of millions of rows). */
  const [busy, setBusy] = useState(false);
  const [pages, setPages] = useState<Map<number, TablePage>>(new Map());
  const requested = useRef(new Set<number>());
  const scroller = useRef<HTMLElement>(null);
  // The unreleased filter follows the timeline's window (whole trace when none is set).
  const [w0, w1] = view.window ?? device.extent[view.axis];

  useEffect(() => {
    remembered.set(kind, { kind, form, sort });
    update({ table: { kind, form, sort } });
    const filters = filtersOf(kind, form);
    if ('error' in filters) {
      setError(filters.error);
      return;
    }
    const spec: TableSpec = {
      kind,
      filter: filters.filter,
      sort,
      unreleased: kind === 'blocks' && form.unreleased ? { axis: view.axis, window: [w0, w1] } : null,
    };
    let live = true;
    setBusy(true);
    client
      .query('table', { device: device.device, spec })
      .then(
        (s) => {
          if (!live) return;
          requested.current = new Set();
          setPages(new Map());
          setError(null);
          setSelected(s);
        },
        (e: Error) => live && setError(e.message),
      )
      .finally(() => live && setBusy(false));
    return () => {
      live = false;
    };
  }, [client, device.device, kind, form, sort, view.axis, w0, w1, update]);

  const count = selected?.count ?? 0;
  const scrollToIndex = useRef((_: number) => {});
  const spans = useRowSpans(count, selected?.version, scrollToIndex);
  const rows = useVirtualizer({
    count: spans.rows,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_PX,
    scrollMargin: HEADER_PX,
    overscan: 30,
  });
  scrollToIndex.current = (i) => rows.scrollToIndex(i, { align: 'auto' });
  const items = rows.getVirtualItems();
  // Positions in the selection of the first and last rows rendered.
  const first = spans.base + (items[0]?.index ?? 0);
  const last = spans.base + (items[items.length - 1]?.index ?? -1);

  // Fetch the pages the visible rows fall in, and forget those far from them: scrolling through
  // millions of rows must not keep them all.
  useEffect(() => {
    if (selected === null) return;
    const [p0, p1] = [Math.floor(first / PAGE_ROWS), Math.floor(last / PAGE_ROWS)];
    const far = (p: number) => p < p0 - KEEP_PAGES || p > p1 + KEEP_PAGES;
    for (const p of requested.current) if (far(p)) requested.current.delete(p);
    setPages((m) => ([...m.keys()].some(far) ? new Map([...m].filter(([p]) => !far(p))) : m));
    for (let p = p0; p <= p1; p++) {
      if (requested.current.has(p)) continue;
      requested.current.add(p);
      const args = { device: device.device, kind, version: selected.version };
      client.query('tableRows', { ...args, from: p * PAGE_ROWS, to: (p + 1) * PAGE_ROWS }).then(
        (page) => setPages((m) => new Map(m).set(p, page)),
        () => undefined, // a newer selection replaced this one
      );
    }
  }, [client, device.device, kind, selected, first, last]);

  const selectedId = kind === 'events' ? view.entry : view.alloc;
  const scrollTo = spans.scrollTo;
  // A selection made elsewhere (or a new filter) scrolls its row into view.
  // scrollTo changes with the span; a span change alone must not scroll back to the selection.
  // biome-ignore lint/correctness/useExhaustiveDependencies: scrollTo
  useEffect(() => {
    if (selected === null || selectedId === null) return;
    const args = { device: device.device, kind, version: selected.version, row: selectedId };
    client.query('tablePosition', args).then(
      (pos) => {
        if (pos >= 0) scrollTo(pos);
      },
      () => undefined,
    );
  }, [client, device.device, kind, selected, selectedId]);

  const rowAt = useCallback(
    (pos: number): { id: number; cells: Cell[] } | null => {
      const page = pages.get(Math.floor(pos / PAGE_ROWS));
      const i = pos - (page?.from ?? 0);
      return page && i < page.ids.length ? { id: page.ids[i]!, cells: page.cells[i]! } : null;
    },
    [pages],
  );
  // Selection moves from the selected row's position (asked of the worker: it may be off screen).
  const step = (delta: number) => {
    const go = (pos: number) => {
      const target = Math.max(0, Math.min(count - 1, pos));
      scrollTo(target);
      const row = rowAt(target);
      if (row) choose(row);
    };
    if (selected === null) return;
    if (selectedId === null) {
      go(0);
      return;
    }
    const args = { device: device.device, kind, version: selected.version, row: selectedId };
    client.query('tablePosition', args).then(
      (pos) => go(pos < 0 ? 0 : pos + delta),
      () => undefined,
    );
  };
  const choose = useCallback(
    (row: { id: number; cells: Cell[] }) => select(client, device.device, kind, row, update),
    [client, device.device, kind, update],
  );

  return (
    <main className="table-page" data-kind={kind}>
      <TableToolbar
        kind={kind}
        form={form}
        onForm={setForm}
        error={error}
        busy={busy}
        categories={selected?.categories ?? []}
        count={selected?.count ?? null}
        total={selected?.total ?? null}
        bytes={selected?.bytes ?? null}
        onExport={(mode) => selected && exportCsv(client, device.device, kind, selected.version, mode)}
      />
      <SpanPager spans={spans} count={count} />
      {selected && (
        <section
          className="grid"
          aria-label={`${kind} rows`}
          ref={scroller}
          // The grid is one tab stop; ↑/↓ and PageUp/PageDown move the selection inside it.
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling grid takes focus for its arrow keys
          tabIndex={0}
          onKeyDown={(e) => {
            const delta = keyDelta(e.key, items.length);
            if (delta === null || count === 0) return;
            e.preventDefault();
            step(delta);
          }}
        >
          <table aria-label={`${kind} table`} aria-rowcount={count + 1} data-count={count}>
            <HeaderRow columns={selected.columns} sort={sort} onSort={setSort} />
            <tbody style={{ height: rows.getTotalSize() }}>
              {items.map((item) => {
                const pos = spans.base + item.index;
                const row = rowAt(pos);
                return (
                  // Rows are picked by mouse here and by the grid's arrow keys.
                  <tr
                    key={item.key}
                    aria-rowindex={pos + 2}
                    aria-selected={row !== null && row.id === selectedId}
                    data-id={row?.id}
                    className="row"
                    style={{ transform: `translateY(${item.start - HEADER_PX}px)`, height: ROW_PX }}
                    onClick={() => row && choose(row)}
                  >
                    {row ? (
                      selected.columns.map((c, i) => (
                        <CellView key={c} column={c} value={row.cells[i]!} startUs={device.startUs} />
                      ))
                    ) : (
                      <td className="cell">…</td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>
      )}
    </main>
  );
}

/** A row selects its entry and the allocation it opened or closed (events), or its allocation and alloc entry (blocks). */
function select(
  client: EngineClient,
  device: number,
  kind: TableKind,
  row: { id: number; cells: Cell[] },
  update: (patch: Partial<ViewState>) => void,
): void {
  if (kind === 'blocks') {
    const allocEntry = row.cells[5];
    update({
      alloc: row.id,
      ...(typeof allocEntry === 'number' && allocEntry >= 0 ? { entry: allocEntry } : {}),
    });
    return;
  }
  client.query('entry', { device, entry: row.id }).then((info) => {
    // As a click on the timeline: an entry that opened or closed no allocation unpins it.
    update({ entry: row.id, alloc: info && info.alloc >= 0 ? info.alloc : null });
  });
}

/** Rows the key moves the selection by: ↑/↓ one, PageUp/PageDown a screenful. */
function keyDelta(key: string, onScreen: number): number | null {
  const page = Math.max(1, onScreen - 2);
  return { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page }[key] ?? null;
}
