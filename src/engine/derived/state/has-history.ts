import type { DeviceModel } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';
/**
 * Whether the trace holds any entry that is not a marker: a file whose trace is empty, only marks
 * where it was dumped, or holds only torch_npu's workspace markers (written at the dump whatever
 * was recorded, model/workspace.ts) has no history to draw, only the dump.
 */
export function hasHistory(d: DeviceModel): boolean {
  for (let i = 0; i < d.trace.length; i++) {
    const a = d.trace.action[i];
    if (a !== Action.snapshot && a !== Action.workspace_snapshot) return true;
  }
  return false;
}
