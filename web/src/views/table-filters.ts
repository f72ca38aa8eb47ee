import { parseAddress } from '../../../src/engine/derived/index.js';
import type { TableKind } from '../worker/table-protocol.js';

/**
 * The table toolbar's fields, turned into the CLI's --filter conditions, so that what the page
 * shows (and exports) is what `memlens events/blocks --filter ...` prints for the same conditions.
 */
export interface FilterForm {
  /** Column the byte range applies to (size, or a total after the entry). */
  rangeColumn: string;
  min: string;
  max: string;
  address: string;
  frame: string;
  /** Only rows of this action (events) or state (blocks); '' = all. */
  category: string;
  unreleased: boolean;
}

export const EMPTY_FORM: FilterForm = {
  rangeColumn: 'size',
  min: '',
  max: '',
  address: '',
  frame: '',
  category: '',
  unreleased: false,
};

/** The column the category select filters. */
export const CATEGORY_COLUMN: Record<TableKind, string> = { events: 'action', blocks: 'state' };

export const RANGE_COLUMNS: Record<TableKind, string[]> = {
  // id: the entry itself (a span of the trace, such as a GC burst).
  events: ['size', 'allocated_bytes', 'active_bytes', 'reserved_bytes', 'id'],
  blocks: ['size', 'block_size'],
};

/** Conditions for the form, or the first field that cannot be read. */
export function filtersOf(kind: TableKind, form: FilterForm): { filter: string[] } | { error: string } {
  const filter: string[] = [];
  if (form.category !== '') filter.push(`${CATEGORY_COLUMN[kind]}=${form.category}`);
  for (const [field, op] of [
    ['min', '>='],
    ['max', '<='],
  ] as const) {
    if (form[field].trim() === '') continue;
    const bytes = parseBytes(form[field]);
    if (bytes === null) return { error: `cannot read ${field} '${form[field]}' (e.g. 4096, 1.5 MiB, 2G)` };
    filter.push(`${form.rangeColumn}${op}${bytes}`);
  }
  if (form.address.trim() !== '') {
    const range = addressRange(form.address);
    if (range === null)
      return { error: `cannot read address '${form.address}' (0x hex or decimal, or a range FROM..TO)` };
    filter.push(...range);
  }
  if (form.frame.trim() !== '') filter.push(`frame~${form.frame.trim()}`);
  return { filter };
}

/** "0x7f00" (that address) or "0x7f00..0x8000" (from, to exclusive: a segment's blocks). */
function addressRange(text: string): string[] | null {
  const [from, to, ...rest] = text.split('..').map((t) => t.trim());
  const a = parseAddress(from!);
  if (a === null || rest.length > 0) return null;
  if (to === undefined) return [`address=${a}`];
  const b = parseAddress(to);
  return b === null ? null : [`address>=${a}`, `address<${b}`];
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

/** "4096", "1.5 MiB", "2G", "512kb": binary units, as the page shows sizes. */
export function parseBytes(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  if (!m) return null;
  return Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!);
}
