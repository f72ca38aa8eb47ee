import { SnapshotError } from '../base/errors.js';
import type { DeviceTrace } from './device-trace.js';
import { Action, type TraceColumns } from './trace-columns.js';

/** What one pass over a device's entries tells, for reports that would each walk them again. */
export interface EntryFacts {
  /** Entries per action code (`TraceColumns.actionNames`; 255: no action). */
  actionCounts: Float64Array;
  /** Per stream code (`TraceColumns.streams`): 1 if an entry of this device uses it. */
  streamsUsed: Uint8Array;
}

/**
 * Counts actions and streams, and checks that entries which change memory say where and how
 * much (the totals depend on it): an entry without them is an error, not a guess.
 */
export function entryFacts(trace: DeviceTrace, cols: TraceColumns, device: number): EntryFacts {
  const actionCounts = new Float64Array(256);
  const streamsUsed = new Uint8Array(cols.streams.length);
  const { action, stream, size, addr } = trace;
  for (let i = 0; i < trace.length; i++) {
    const a = action[i]!;
    actionCounts[a]++;
    streamsUsed[stream[i]!] = 1;
    // snapshot, oom, annotate and unknown actions carry no memory change
    if (a > Action.segment_unmap && a !== Action.free) continue;
    if (Number.isNaN(size[i]!) || Number.isNaN(addr[i]!)) missing(trace, cols, device, i);
  }
  if (actionCounts[255]! > 0) noAction(trace, device);
  return { actionCounts, streamsUsed };
}

/** The first entry without an action: the error names the first bad entry, whatever is wrong. */
function noAction(trace: DeviceTrace, device: number): never {
  throw new SnapshotError(`device ${device} trace entry ${trace.action.indexOf(255)} has no 'action'`);
}

function missing(trace: DeviceTrace, cols: TraceColumns, device: number, i: number): never {
  const first = trace.action.indexOf(255);
  if (first >= 0 && first < i) noAction(trace, device);
  const what = Number.isNaN(trace.size[i]!) ? 'size' : 'addr';
  const name = cols.actionNames[trace.action[i]!];
  throw new SnapshotError(`device ${device} trace entry ${i} (${name}) has no '${what}'`);
}
