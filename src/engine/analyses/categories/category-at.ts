import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { CATEGORIES, type Category, categoryLabeller } from './categories.js';

export interface CategoryBytes {
  category: Category;
  bytes: number;
}

/**
 * Live bytes per category after entry `k` (-1: before the first entry), as `categoriesOf`'s walk
 * counts them (in at the alloc, out at the free request), from one look at each allocation and
 * labels for the live ones only: the diagnosis's peak needs one moment, not the whole curve.
 */
export function categoryBytesAfter(s: Snapshot, d: DeviceModel, k: number): CategoryBytes[] {
  const a = d.allocations;
  const categoryOf = categoryLabeller(s, d);
  const bytes = new Float64Array(CATEGORIES.length);
  for (let id = 0; id < a.count; id++) {
    if (liveAfter(a.start[id]!, a.freeRequested[id]!, k)) bytes[categoryOf(id)]! += a.size[id]!;
  }
  return CATEGORIES.map((category, c) => ({ category, bytes: bytes[c]! }));
}

/** Counted by the walk after entry k: opened before the window or by k, not yet asked to be freed. */
function liveAfter(start: number, freeRequested: number, k: number): boolean {
  const opened = start === -1 ? freeRequested !== FREED_BEFORE_WINDOW : start >= 0 && start <= k;
  return opened && !(freeRequested >= 0 && freeRequested <= k);
}
