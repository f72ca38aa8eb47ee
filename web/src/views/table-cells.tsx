import { formatDuration } from '../../../src/engine/base/index.js';
import { shortName, shortPath } from '../../../src/engine/derived/index.js';
import type { Cell } from '../../../src/engine/views/tables/index.js';
import { exactBytes, formatBytes, formatCount, hex } from '../format.js';

/**
 * The tables' header and cells: sizes in KiB/MiB/GiB with exact bytes on hover, addresses in
 * hex, entries that fall outside the trace as a dash; the CLI's values stay in the worker.
 */
/** Sort by a header: ascending, then descending, then back to id order. */
export function HeaderRow(p: { columns: string[]; sort: string | null; onSort: (s: string | null) => void }) {
  return (
    <thead>
      <tr className="row header">
        {p.columns.map((c) => {
          const state = p.sort === c ? 'ascending' : p.sort === `-${c}` ? 'descending' : 'none';
          const next = state === 'none' ? c : state === 'ascending' ? `-${c}` : null;
          return (
            <th key={c} scope="col" aria-sort={state} data-column={c} className={`cell col-${c}`}>
              <button type="button" onClick={() => p.onSort(next)}>
                {c}
                {state === 'ascending' ? ' ▲' : state === 'descending' ? ' ▼' : ''}
              </button>
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

const BYTE_COLUMNS = new Set(['size', 'block_size', 'allocated_bytes', 'active_bytes', 'reserved_bytes']);

/** Sizes in KiB/MiB/GiB with exact bytes on hover; addresses in hex. */
export function CellView({
  column,
  value,
  startUs = null,
}: {
  column: string;
  value: Cell;
  /** The trace's first time_us: time cells show the time since it (raw µs only in their title). */
  startUs?: number | null;
}) {
  const cls = `cell col-${column}`;
  if (value === null) return <td className={TEXT_COLUMNS.has(column) ? cls : `${cls} num`}>—</td>;
  if (typeof value === 'number' && BYTE_COLUMNS.has(column))
    return (
      <td className={`${cls} num`} title={exactBytes(value)}>
        {formatBytes(value)}
      </td>
    );
  if (typeof value === 'number' && column === 'address')
    return (
      <td className={`${cls} num`} title={String(value)}>
        {hex(value)}
      </td>
    );
  if (value === -1 && column.endsWith('_event'))
    return (
      <td className={`${cls} num`} title="outside the recorded trace (-1 in the CLI's table)">
        —
      </td>
    );
  if (typeof value === 'number' && column === 'time_us' && startUs !== null)
    return (
      <td className={`${cls} num`} title={`time_us ${value}`}>
        {formatDuration(value - startUs)}
      </td>
    );
  if (typeof value === 'number')
    return <td className={`${cls} num`}>{column === 'time_us' ? value : formatCount(value)}</td>;
  return (
    <td className={cls} title={value}>
      {column === 'frame' ? <FrameText text={value} /> : value}
    </td>
  );
}

const TEXT_COLUMNS = new Set(['action', 'state', 'frame']);

/**
 * "name (…/pkg/file.py:12)" from the engine's whole text (formatFrame with full paths): the
 * function (a C++ one without its signature) and the end of its path fit the column; hover shows all.
 */
function FrameText({ text }: { text: string }) {
  if (text === '') return '';
  const m = /^(.*) \(([^()]*)\)$/.exec(text);
  const name = shortName(m ? m[1]! : text);
  if (!m) return <b>{name}</b>;
  const at = /^(.*):(\d+)$/.exec(m[2]!);
  return (
    <>
      <b>{name}</b> ({at ? `${shortPath(at[1]!)}:${at[2]}` : shortPath(m[2]!)})
    </>
  );
}
