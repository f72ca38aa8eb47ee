/**
 * torch_npu's workspace allocator (Ascend/pytorch, torch_npu/csrc/core/npu/NPUWorkspaceAllocator.cpp)
 * keeps one block per stream outside the caching allocator. At dump time (Module.cpp,
 * THNPModule_memorySnapshot) its segments are appended to `segments` and its trace is prepended to
 * the device's: per block `workspace_snapshot`, `segment_alloc` and `alloc` with the block's
 * address and size (`get_trace`). Those three entries describe the block as it is at the dump; they
 * are not events of the recorded window, and the block they describe is written 'inactive' because
 * `WorkspaceBlock::allocated` is never set (`get_segm`).
 *
 * So memlens reads each triple as one marker (all three coded `workspace_snapshot`: no change to
 * any curve, no tensor without a stack) and the segment's block as workspace, neither free memory
 * the caching allocator could hand out nor a live tensor.
 */

import type { RowList } from './row-list.js';
import { BlockState, type Segment, type SegmentTables } from './segments.js';
import { Action, KNOWN_ACTIONS, type TraceColumns } from './trace-columns.js';

export interface WorkspaceMarks {
  /** Workspace blocks found, every device. */
  blocks: number;
  bytes: number;
  /** Per device, the entries recoded from each action ('segment_alloc', 'alloc'): the file's counts. */
  recoded: Map<number, Map<string, number>>;
}

/** Recodes the workspace triples of every device's list and marks the segments they name. */
export function markWorkspace(
  tables: SegmentTables,
  cols: TraceColumns,
  lists: (RowList | undefined)[],
): WorkspaceMarks {
  const marks: WorkspaceMarks = { blocks: 0, bytes: 0, recoded: new Map() };
  lists.forEach((rows, device) => {
    if (rows === undefined) return;
    const addrs = new Set<number>();
    for (let i = 0; i < rows.count; i++) {
      const row = rows.at(i);
      if (cols.action[row] !== Action.workspace_snapshot) continue;
      const addr = cols.addr[row]!;
      addrs.add(addr);
      // get_trace writes segment_alloc then alloc right after, same address and size.
      for (const [k, action] of [
        [1, Action.segment_alloc],
        [2, Action.alloc],
      ] as const) {
        if (i + k >= rows.count) break;
        const next = rows.at(i + k);
        if (cols.action[next] !== action || cols.addr[next] !== addr) break;
        cols.action[next] = Action.workspace_snapshot;
        cols.writtenAs.set(next, action);
        const counts = marks.recoded.get(device) ?? new Map<string, number>();
        counts.set(KNOWN_ACTIONS[action], (counts.get(KNOWN_ACTIONS[action]) ?? 0) + 1);
        marks.recoded.set(device, counts);
      }
    }
    if (addrs.size > 0) markSegments(tables, device, addrs, marks);
  });
  return marks;
}

function markSegments(
  tables: SegmentTables,
  device: number,
  addrs: Set<number>,
  marks: WorkspaceMarks,
): void {
  const b = tables.blocks;
  for (const seg of tables.segments) {
    if (seg.device !== device || !addrs.has(seg.address)) continue;
    for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
      if (b.state[k] !== BlockState.inactive) continue;
      b.state[k] = BlockState.workspace;
      marks.blocks++;
      marks.bytes += b.size[k]!;
    }
  }
}

/** A workspace segment: its one block was marked by markWorkspace. */
export function isWorkspaceSegment(tables: SegmentTables, seg: Segment): boolean {
  return seg.blockCount > 0 && tables.blocks.state[seg.firstBlock] === BlockState.workspace;
}
