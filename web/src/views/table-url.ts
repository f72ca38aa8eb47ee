import type { TableKind } from '../worker/table-protocol.js';
import { EMPTY_FORM, type FilterForm } from './table-filters.js';

/** What a table tab shows besides its rows: the filter fields and the sort column. */
export interface TableState {
  kind: TableKind;
  form: FilterForm;
  sort: string | null;
}

/** URL parameter of each filter field (short: they sit in the hash with everything else). */
const PARAMS: [keyof Omit<FilterForm, 'unreleased'>, string][] = [
  ['rangeColumn', 'rcol'],
  ['min', 'min'],
  ['max', 'max'],
  ['address', 'addr'],
  ['frame', 'frame'],
  ['category', 'is'],
];

/** The table state of an Events or Blocks tab from the hash (null on other tabs). */
export function readTableState(p: URLSearchParams, tab: string): TableState | null {
  if (tab !== 'events' && tab !== 'blocks') return null;
  const form: FilterForm = { ...EMPTY_FORM, unreleased: p.get('unrel') === '1' };
  for (const [field, key] of PARAMS) form[field] = p.get(key) ?? EMPTY_FORM[field];
  return { kind: tab, form, sort: p.get('sort') };
}

export function writeTableState(p: URLSearchParams, s: TableState): void {
  for (const [field, key] of PARAMS) if (s.form[field] !== EMPTY_FORM[field]) p.set(key, s.form[field]);
  if (s.form.unreleased) p.set('unrel', '1');
  if (s.sort !== null) p.set('sort', s.sort);
}
