import type { DeviceModel } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';
/**
 * Whether the trace holds any entry that is not a `snapshot` marker: a file whose trace is empty or
 * only marks where it was dumped has no history to draw, only the dump.
 */
export function hasHistory(d: DeviceModel): boolean {
  for (let i = 0; i < d.trace.length; i++) if (d.trace.action[i] !== Action.snapshot) return true;
  return false;
}
