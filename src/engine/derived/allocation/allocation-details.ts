import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import { BlockState } from '../../model/segments.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type FrameKind, userFirstStack } from '../frames/user-frames.js';
import { SMALL_REQUEST_LIMIT } from '../state/trace-window.js';

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
  /**
   * The allocator pool that served it: its dump segment's when the block is in the dump
   * (`pool_exact`), else by the allocator's rule (requests of at most 1 MiB come from the small pool).
   */
  pool: string;
  pool_exact: boolean;
  /** A private pool's id (CUDA graphs, MemPool): its dump segment's, else the alloc entry's `pool_id`; null for the default pool. */
  private_pool: [number, number] | null;
  /** The alloc entry's `user_metadata` and `compile_context` (torch.compile), when recorded. */
  user_metadata: string | null;
  compile_context: string | null;
  /**
   * The stack as it is read first (user-frames.ts userFirstStack): from the innermost frame of
   * the user's code outwards, the recorder, allocator, dispatcher and interpreter frames hidden.
   */
  frames: DetailFrame[];
  /** The visible frames inside that innermost user frame (the library call and operator), innermost first. */
  inner_frames: DetailFrame[];
  /** Frames the two lists leave out. */
  hidden_frames: number;
  /** The whole stack as recorded, innermost first ("full stack"). */
  full_frames: DetailFrame[];
}

export interface DetailFrame {
  filename: string;
  line: number;
  name: string;
  kind: FrameKind;
  /** The user's own code (kind 'user'). */
  user: boolean;
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
  const stack = userFirstStack(s.stacks.frames(a.stack[id]!));
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
    ...poolOf(s, d, id),
    user_metadata: textAt(s, t.userMetadata, start),
    compile_context: textAt(s, t.compileContext, start),
    frames: stack.frames.map(detailFrame),
    inner_frames: stack.inner.map(detailFrame),
    hidden_frames: stack.hidden,
    full_frames: stack.all.map(detailFrame),
  };
}

function detailFrame(f: { filename: string; line: number; name: string; kind: FrameKind }): DetailFrame {
  return { filename: f.filename, line: f.line, name: f.name, kind: f.kind, user: f.kind === 'user' };
}

type PoolFields = Pick<AllocationDetails, 'pool' | 'pool_exact' | 'private_pool'>;

function poolOf(s: Snapshot, d: DeviceModel, id: number): PoolFields {
  const a = d.allocations;
  const b = a.block[id]!;
  const seg =
    b < 0 ? undefined : s.tables.segments.find((g) => b >= g.firstBlock && b < g.firstBlock + g.blockCount);
  if (seg !== undefined) {
    const [x, y] = seg.poolId;
    return { pool: seg.pool, pool_exact: true, private_pool: x === 0 && y === 0 ? null : [x, y] };
  }
  const code = a.start[id]! >= 0 ? (d.trace.poolId?.[a.start[id]!] ?? -1) : -1;
  const traced = code >= 0 ? s.traceColumns.pools[code]! : null;
  return {
    pool: a.size[id]! <= SMALL_REQUEST_LIMIT ? 'small' : 'large',
    pool_exact: false,
    private_pool: traced === null || (traced[0] === 0 && traced[1] === 0) ? null : [traced[0], traced[1]],
  };
}

/** A text column's value at an entry (compile_context, user_metadata), null when not recorded. */
function textAt(s: Snapshot, column: Int32Array | undefined, k: number): string | null {
  const code = k >= 0 ? (column?.[k] ?? -1) : -1;
  return code >= 0 ? s.traceColumns.texts[code]! : null;
}

function stateAtDump(s: Snapshot, block: number): AllocationDetails['state_at_dump'] {
  return block >= 0 && s.tables.blocks.state[block] === BlockState.pendingFree
    ? 'active_pending_free'
    : 'active_allocated';
}
