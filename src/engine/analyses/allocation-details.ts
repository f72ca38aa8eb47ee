import { FREED_BEFORE_WINDOW } from '../model/allocations.js';
import { BlockState } from '../model/segments.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { userFrames } from './user-frames.js';

/** Everything the file says about one allocation: what a click on it pins. */
export interface AllocationDetails {
  id: number;
  address: number;
  /** Requested bytes (as the trace records them). */
  size: number;
  /** Rounded block bytes when the block is alive at dump, else null. */
  block_size: number | null;
  stream: number;
  /** Trace entries; -1 = before the recorded window, null = not (yet) happened at dump. */
  alloc_entry: number;
  free_requested_entry: number | null;
  free_completed_entry: number | null;
  alloc_time_us: number | null;
  free_time_us: number | null;
  /** Entries between alloc and free_completed (or the dump); null when the alloc was not recorded. */
  lifetime_entries: number | null;
  lifetime_us: number | null;
  state_at_dump: 'active_allocated' | 'active_pending_free' | 'freed';
  /** The whole stack, innermost first; `user` marks the frames peak groups by (user-frames.ts). */
  frames: { filename: string; line: number; name: string; user: boolean }[];
}

export function allocationDetails(s: Snapshot, d: DeviceModel, id: number): AllocationDetails {
  const a = d.allocations;
  const t = d.trace;
  const n = t.length;
  const start = a.start[id]!;
  const end = a.end[id]!;
  const requested = a.freeRequested[id]!;
  const b = a.block[id]!;
  const time = (k: number): number | null =>
    k >= 0 && k < n && !Number.isNaN(t.timeUs[k]!) ? t.timeUs[k]! : null;
  const frames = s.stacks.frames(a.stack[id]!);
  const user = new Set(userFrames(frames));
  const freeTime = time(end);
  const allocTime = time(start);
  return {
    id,
    address: a.addr[id]!,
    size: a.size[id]!,
    block_size: b >= 0 ? s.tables.blocks.size[b]! : null,
    stream: s.traceColumns.streams[a.stream[id]!] ?? 0,
    alloc_entry: start,
    free_requested_entry: requested === FREED_BEFORE_WINDOW ? -1 : requested >= 0 ? requested : null,
    free_completed_entry: end < n ? end : null,
    alloc_time_us: allocTime,
    free_time_us: freeTime,
    lifetime_entries: start >= 0 ? Math.min(end, n) - start : null,
    lifetime_us: allocTime !== null && freeTime !== null ? freeTime - allocTime : null,
    state_at_dump: end < n ? 'freed' : stateAtDump(s, b),
    frames: frames.map((f) => ({ filename: f.filename, line: f.line, name: f.name, user: user.has(f) })),
  };
}

function stateAtDump(s: Snapshot, block: number): AllocationDetails['state_at_dump'] {
  return block >= 0 && s.tables.blocks.state[block] === BlockState.pendingFree
    ? 'active_pending_free'
    : 'active_allocated';
}
