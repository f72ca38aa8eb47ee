/**
 * Shapes the simulation into the dicts `_snapshot()` returns, key order included:
 * late 2025 (2.10), PyTorch 2.0 (`history` blocks) and the bare segment list.
 */
import { type PyValue, pyFloat, pyTuple, Shared } from '../../src/engine/encode/index.js';
import { ALLOCATED, type Block, FREE, PENDING } from './blocks.js';
import { ACTION_NAMES, OOM, type SimEvent } from './events.js';
import type { Stack } from './frames.js';
import type { ResolvedOptions } from './options.js';
import type { SegmentView } from './views.js';

export type Format = 'late' | 'v2.0';

/** Strings PyTorch creates once and reuses, hence pickled once. */
export interface Atoms {
  readonly actions: readonly Shared[];
  readonly states: readonly Shared[];
  readonly large: Shared;
  readonly small: Shared;
  /** Every empty frames list in a snapshot is one list object. */
  readonly emptyFrames: Shared;
}

export function makeAtoms(): Atoms {
  const states: Shared[] = [];
  states[FREE] = new Shared('inactive');
  states[ALLOCATED] = new Shared('active_allocated');
  states[PENDING] = new Shared('active_pending_free');
  return {
    actions: ACTION_NAMES.map((a) => new Shared(a)),
    states,
    large: new Shared('large'),
    small: new Shared('small'),
    emptyFrames: new Shared([]),
  };
}

/**
 * Which frames list an event or block refers to. PyTorch builds one list per captured traceback:
 * a live block shares it with its `alloc` event (and a new segment with both), and consecutive
 * events of one allocator call share theirs.
 */
export class FramesResolver {
  private readonly live = new Map<number, Shared>();
  private prevCapture = -1;
  private prevList: Shared | null = null;

  constructor(private readonly shareIdentical: boolean) {}

  /** The list of a traceback that is still referenced from the segments. */
  forLive(capture: number, stack: Stack): Shared {
    if (this.shareIdentical) return stack.list;
    let list = this.live.get(capture);
    if (list === undefined) {
      list = new Shared(stack.frames as PyValue[]);
      this.live.set(capture, list);
    }
    return list;
  }

  forEvent(e: SimEvent): Shared {
    const stack = e.stack!;
    if (this.shareIdentical) return stack.list;
    const list =
      this.live.get(e.capture) ??
      (e.capture === this.prevCapture && this.prevList !== null
        ? this.prevList
        : new Shared(stack.frames as PyValue[]));
    this.prevCapture = e.capture;
    this.prevList = list;
    return list;
  }
}

/**
 * The keys every segment dict begins with, in PyTorch's and torch_npu's order (both snapshot()s
 * write them alike), and the requested sum that follows in the newer formats.
 */
export function segmentHead(v: SegmentView, device: number) {
  const { allocated, active, requested } = segmentSums(v);
  const head = {
    device,
    address: v.addr,
    total_size: v.size,
    allocated_size: allocated,
    active_size: active,
  };
  return { head, requested };
}

/** A segment's allocated, active and requested sums, as the allocator's snapshot() adds them. */
function segmentSums(v: SegmentView): { allocated: number; active: number; requested: number } {
  let allocated = 0;
  let active = 0;
  let requested = 0;
  for (const b of v.blocks) {
    if (b.state === ALLOCATED) allocated += b.size;
    if (b.state !== FREE) {
      active += b.size;
      requested += b.requested;
    }
  }
  return { allocated, active, requested };
}

export function segmentDict(v: SegmentView, atoms: Atoms, frames: FramesResolver, format: Format): PyValue {
  const { head, requested } = segmentHead(v, v.device);
  const common = {
    ...head,
    requested_size: requested,
    stream: v.stream,
    segment_type: v.pool.small ? atoms.small : atoms.large,
  };
  if (format === 'v2.0') return { ...common, blocks: v.blocks.map((b) => legacyBlockDict(b, atoms, frames)) };
  return {
    ...common,
    segment_pool_id: pyTuple([...v.pool.id]),
    is_expandable: v.expandable,
    frames: v.stack === null ? atoms.emptyFrames : frames.forLive(v.capture, v.stack),
    blocks: v.blocks.map((b) => blockDict(b, atoms, frames)),
  };
}

function blockDict(b: Block, atoms: Atoms, frames: FramesResolver): PyValue {
  const live = b.state !== FREE && b.stack !== null;
  return {
    address: b.addr,
    size: b.size,
    requested_size: b.requested,
    state: atoms.states[b.state]!,
    frames: live ? frames.forLive(b.capture, b.stack!) : atoms.emptyFrames,
  };
}

/** PyTorch 2.0: no address, the allocation's stack in `history` (kept after the free). */
function legacyBlockDict(b: Block, atoms: Atoms, frames: FramesResolver): PyValue {
  const entry =
    b.state !== FREE && b.stack !== null
      ? { addr: b.addr, real_size: b.requested, frames: frames.forLive(b.capture, b.stack) }
      : b.history?.stack
        ? { addr: b.history.addr, real_size: b.history.requested, frames: b.history.stack.list }
        : null;
  return {
    size: b.size,
    requested_size: b.requested,
    state: atoms.states[b.state]!,
    history: entry === null ? [] : [entry],
  };
}

export function traceEntry(e: SimEvent, atoms: Atoms, frames: FramesResolver, o: ResolvedOptions): PyValue {
  const action = atoms.actions[e.action]!;
  if (e.action === OOM) return oomEntry(e, action, frames, o);
  if (o.legacy === 'v2.0') return { action, addr: e.addr, size: e.size, stream: e.stream };
  const list = frames.forEvent(e);
  // compile_context is a fresh 'N/A' string per entry in real files, so it is not shared here.
  if (o.noTimeUs) {
    return {
      action,
      addr: e.addr,
      size: e.size,
      stream: e.stream,
      compile_context: 'N/A',
      user_metadata: '',
      frames: list,
    };
  }
  return {
    action,
    addr: e.addr,
    size: e.size,
    stream: e.stream,
    time_us: e.time,
    compile_context: 'N/A',
    user_metadata: '',
    frames: list,
  };
}

/** `device_free` takes the place of `addr`. */
function oomEntry(e: SimEvent, action: Shared, frames: FramesResolver, o: ResolvedOptions): PyValue {
  const head = { action, device_free: e.addr, size: e.size, stream: e.stream };
  if (o.legacy === 'v2.0') return head;
  const list = frames.forEvent(e);
  if (o.noTimeUs) return { ...head, compile_context: 'N/A', user_metadata: '', frames: list };
  return { ...head, time_us: e.time, compile_context: 'N/A', user_metadata: '', frames: list };
}

export function allocatorSettings(o: ResolvedOptions, maxEntries: number | null): PyValue {
  const divisions = new Map<PyValue, PyValue>();
  for (let i = 0; i < 16; i++) divisions.set(String(2 ** i), 0);
  const settings = new Map<PyValue, PyValue>([
    ['PYTORCH_CUDA_ALLOC_CONF', o.expandableSegments ? 'expandable_segments:True' : ''],
    ['max_split_size', -1],
    ['garbage_collection_threshold', pyFloat(0)],
    ['expandable_segments', o.expandableSegments],
    ['pinned_num_register_threads', 1],
    ['release_lock_on_cudamalloc', false],
    ['pinned_use_cuda_host_register', false],
    ['graph_capture_record_stream_reuse', false],
    ['roundup_power2_divisions', divisions],
  ]);
  if (maxEntries !== null) {
    settings.set('trace_alloc_max_entries', maxEntries);
    settings.set('trace_alloc_overflowed', true);
  }
  return settings;
}
