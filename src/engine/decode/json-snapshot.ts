import { SnapshotError } from '../base/errors.js';
import type { DecodedPickle } from '../model/decoded.js';
import { RowList } from '../model/row-list.js';
import { StackTable } from '../model/stack-table.js';
import { TraceColumns } from '../model/trace-columns.js';
import { describeValue, isDict } from '../values/py-values.js';
import { StackRef } from '../values/stack-ref.js';
import { internFrameList } from './special-values.js';

/** V8 cannot hold a longer string, so bigger JSON snapshots are refused with a clear message. */
export const MAX_JSON_BYTES = 512 * 1024 * 1024 - 64;

/**
 * A snapshot written as JSON (same structure as the pickle; the newest memory_viz accepts it)
 * → the same decoded form the pickle decoder produces: trace entries as columns, frames interned.
 */
export function decodeJsonSnapshot(text: string): DecodedPickle {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (e) {
    throw new SnapshotError(`not valid JSON: ${(e as Error).message}`);
  }
  const stacks = new StackTable();
  const trace = new TraceColumns();
  const traceLists = new Map<unknown[], RowList>();
  internFrames(root, stacks);
  if (isDict(root) && Array.isArray(root.device_traces)) {
    for (const list of root.device_traces) {
      if (Array.isArray(list) && list.length > 0) traceLists.set(list, entriesToRows(list, trace, stacks));
    }
  }
  return { root, protocol: undefined, trace, stacks, traceLists, inert: { count: 0, examples: [] } };
}

function entriesToRows(list: unknown[], trace: TraceColumns, stacks: StackTable): RowList {
  const rows = new RowList();
  list.forEach((entry, i) => {
    if (!isDict(entry))
      throw new SnapshotError(`trace entry ${i} is ${describeValue(entry)}, expected a dict`);
    const row = trace.begin();
    for (const k of Object.keys(entry)) {
      if (k === 'frames') trace.stack[row] = toStackId(entry[k], stacks);
      else trace.set(row, k, entry[k]);
    }
    rows.add(row);
  });
  list.length = 0;
  return rows;
}

/** Segment, block and history `frames` lists become StackRefs, as the pickle decoder makes them. */
function internFrames(root: unknown, stacks: StackTable): void {
  const segments = Array.isArray(root) ? root : isDict(root) ? root.segments : undefined;
  if (!Array.isArray(segments)) return;
  for (const seg of segments) {
    if (!isDict(seg)) continue;
    replaceFrames(seg, stacks);
    const blocks = Array.isArray(seg.blocks) ? seg.blocks : [];
    for (const block of blocks) {
      if (!isDict(block)) continue;
      replaceFrames(block, stacks);
      const history = Array.isArray(block.history) ? block.history : [];
      for (const h of history) if (isDict(h)) replaceFrames(h, stacks);
    }
  }
}

function replaceFrames(d: Record<string, unknown>, stacks: StackTable): void {
  if (Array.isArray(d.frames)) d.frames = new StackRef(toStackId(d.frames, stacks));
}

function toStackId(frames: unknown, stacks: StackTable): number {
  if (frames === null || frames === undefined) return -1;
  if (!Array.isArray(frames))
    throw new SnapshotError(`'frames' is ${describeValue(frames)}, expected a list`);
  return internFrameList(frames, stacks, 0);
}
