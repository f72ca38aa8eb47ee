import { formatCount } from '../format.js';
import type { TableKind, TableSelected } from '../worker/table-protocol.js';
import { Bytes } from './analyses/bits.js';
import type { ExportMode } from './table-export.js';
import { CATEGORY_COLUMN, type FilterForm, RANGE_COLUMNS } from './table-filters.js';

interface Props {
  kind: TableKind;
  form: FilterForm;
  onForm: (f: FilterForm) => void;
  error: string | null;
  busy: boolean;
  categories: string[];
  count: number | null;
  total: number | null;
  /** Blocks: requested bytes of the rows selected (total, largest, smallest). */
  bytes: TableSelected['bytes'];
  onExport: (mode: ExportMode) => void;
}

/** Range, address and frame filters, "unreleased in range" (blocks), the row count and CSV export. */
export function TableToolbar(p: Props) {
  const { kind, form, onForm, error, busy, count, total, onExport } = p;
  const set = (patch: Partial<FilterForm>) => onForm({ ...form, ...patch });
  const text = (field: 'min' | 'max' | 'address' | 'frame', label: string, placeholder: string) => (
    <label>
      {label}{' '}
      <input
        aria-label={`${kind} ${field}`}
        placeholder={placeholder}
        defaultValue={form[field]}
        size={field === 'frame' ? 18 : field === 'address' ? 16 : 10}
        // Applied on Enter or leaving the field: each change re-selects millions of rows in the worker.
        onKeyDown={(e) => e.key === 'Enter' && set({ [field]: e.currentTarget.value })}
        onBlur={(e) => e.currentTarget.value !== form[field] && set({ [field]: e.currentTarget.value })}
      />
    </label>
  );
  return (
    <div className="toolbar table-toolbar">
      <select
        aria-label={`${kind} ${CATEGORY_COLUMN[kind]}`}
        value={form.category}
        onChange={(e) => set({ category: e.target.value })}
      >
        <option value="">every {CATEGORY_COLUMN[kind]}</option>
        {p.categories.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
      <select
        aria-label={`${kind} range column`}
        value={form.rangeColumn}
        onChange={(e) => set({ rangeColumn: e.target.value })}
      >
        {RANGE_COLUMNS[kind].map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
      {text('min', '≥', 'e.g. 1 MiB')}
      {text('max', '≤', 'e.g. 2G')}
      {text('address', 'address', '0x… or 0x…..0x…')}
      {text('frame', 'frame', 'name or file')}
      {kind === 'blocks' && (
        <label title="allocations made in the timeline's current window and not freed by its end">
          <input
            type="checkbox"
            aria-label="unreleased in range"
            checked={form.unreleased}
            onChange={(e) => set({ unreleased: e.target.checked })}
          />{' '}
          unreleased in timeline window
        </label>
      )}
      <span className="table-count" aria-live="polite" aria-busy={busy}>
        {busy && 'selecting… '}
        {count !== null && total !== null && `${formatCount(count)} of ${formatCount(total)} rows`}
      </span>
      {p.bytes && (
        <output className="table-bytes" aria-label={`${kind} bytes`}>
          requested: <Bytes n={p.bytes.total} /> in all, largest <Bytes n={p.bytes.max} />, smallest{' '}
          <Bytes n={p.bytes.min} />
        </output>
      )}
      <button type="button" onClick={() => onExport('download')} disabled={count === null}>
        export CSV
      </button>
      <button type="button" onClick={() => onExport('copy')} disabled={count === null}>
        copy CSV
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
