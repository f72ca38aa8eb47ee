/**
 * `memlens oom`: why each out-of-memory error of the trace happened (verdict.ts), what held the
 * memory then (held.ts), the failing request's stack, and what would help, each with the replay
 * that tests it (suggestions.ts). With no `oom` in the trace and a capacity, the dump-time state
 * is checked the same way for a request of a given size, or for the largest that would fit.
 */
import { SnapshotError } from '../../base/errors.js';
import { formatBytes, formatCount, formatStream, plural } from '../../base/format.js';
import { type KindedFrame, userFirstStack } from '../../derived/frames/user-frames.js';
import {
  dumpFreeState,
  type FreeGroup,
  type FreeState,
  freeStateAfter,
} from '../../derived/state/free-blocks.js';
import { SMALL_REQUEST_LIMIT } from '../../derived/state/trace-window.js';
import { mainStream } from '../../model/main-stream.js';
import { requestPad } from '../../model/producer.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { Frame } from '../../model/stack-table.js';
import { Action } from '../../model/trace-columns.js';
import { type Labels, labelAllocations } from '../categories/categories.js';
import { type HeldMemory, heldAt } from './held.js';
import { type FailureFigures, fragmentationSuggestions, type OomSuggestion } from './suggestions.js';
import { type Figures, judge, type OomReading, type OomVerdict } from './verdict.js';

export type { HeldMemory } from './held.js';
export type { OomSuggestion } from './suggestions.js';
export type { OomReading, OomVerdict } from './verdict.js';

export interface OomReport {
  /** Trace entry of the `oom`, or -1 for a check of the dump-time state against a capacity. */
  entry: number;
  time_us: number | null;
  /** The failed request (rounded, as the `oom` entry records it); 0: a dump-time check without one. */
  requested_bytes: number;
  pool: 'large' | 'small';
  stream: number;
  /** What CUDA said was free on the device (`device_free`), or capacity − reserved for a check. */
  device_free_bytes: number;
  reserved_bytes: number;
  /** Requested bytes of live allocations (the trace's allocated curve). */
  allocated_bytes: number;
  /** Cached, unused bytes in reserved segments of the request's pool (every stream). */
  cached_free_bytes: number;
  /** The largest free block the request could have used: same pool and stream, default pool. */
  largest_free_block: number;
  /** The pool's free lists, one per stream (the allocator never hands a block to another stream). */
  free_lists: FreeGroup[];
  /** True when free blocks come from the dump (exact); false when estimated from the trace. */
  exact_free_blocks: boolean;
  /** The GPU's total memory, as given (--capacity); null: not given. */
  capacity_bytes: number | null;
  /** capacity − reserved − device_free: CUDA context, NCCL, other processes. null without capacity. */
  outside_bytes: number | null;
  verdict: OomVerdict;
  /** The verdict in one sentence with the figure that decides it (what a diagnosis says). */
  headline: string;
  /** The verdict in words, with the arithmetic, the sentence that proves it first. */
  explanation: string[];
  /** 'undetermined' only: the reading on a GPU of deciding_capacity_bytes or more, then on a GPU that small. */
  readings: OomReading[];
  /** 'undetermined' only: the GPU total memory from which the OOM was caused outside PyTorch. */
  deciding_capacity_bytes: number | null;
  /** A dump-time check without a request: the largest request that would have fit; else null. */
  largest_fitting_request_bytes: number | null;
  /** The failing request's frames from the innermost frame of the user's code outwards (userFirstStack). */
  stack: KindedFrame<Frame>[];
  /** What that user frame called on the way to the allocator (library, operator), innermost first. */
  stack_inner: KindedFrame<Frame>[];
  /** Frames the recorded stack has in all (the recorder's, allocator's and dispatcher's are left out). */
  stack_frames: number;
  /**
   * A request recorded with no frames while other entries have some came from a thread running no
   * Python code (autograd's backward threads): the OOM entry carries the context malloc gathers at
   * the "state" level, recorded under every context setting (c10/cuda/CUDACachingAllocator.cpp
   * malloc: `maybeGatherContext(RecordContext::STATE)`, then `record_trace(TraceEntry::OOM, …,
   * std::move(context))`). Here, the nearest earlier entry with a stack, which shows what the
   * program was in; null when the request has frames or none is found.
   */
  last_stack_before: LastStack | null;
  /** What held memory then: the largest allocating sites and the categories. */
  held: HeldMemory;
  /** What would help, each with the `memlens simulate` arguments that test it. */
  suggestions: OomSuggestion[];
  /** The suggestions as sentences ("setting — why"). */
  settings: string[];
}

export function oomReports(s: Snapshot, d: DeviceModel, capacity?: number, requestBytes = 0): OomReport[] {
  const reports: OomReport[] = [];
  let labels: Labels | undefined;
  const held = (entry: number) => heldAt(s, d, entry, (labels ??= labelAllocations(s, d)));
  for (let i = 0; i < d.trace.length; i++) {
    if (d.trace.action[i] !== Action.oom) continue;
    reports.push(
      report(
        s,
        d,
        i,
        d.trace.size[i]!,
        d.trace.deviceFree?.[i] ?? Number.NaN,
        s.traceColumns.streams[d.trace.stream[i]!] ?? 0,
        capacity,
        held,
      ),
    );
  }
  if (reports.length === 0 && capacity !== undefined) {
    const r = d.totals.end.reserved;
    if (capacity < r)
      throw new SnapshotError(
        `--capacity ${formatBytes(capacity)} is below the ${formatBytes(r)} device ${d.device} had reserved at the dump: give the GPU's total memory (e.g. 80GiB)`,
      );
    const request = requestBytes > 0 ? roundRequest(requestBytes + requestPad(s.producer)) : 0;
    reports.push(report(s, d, -1, request, capacity - r, mainStream(s, d), capacity, held));
  }
  return reports;
}

function report(
  s: Snapshot,
  d: DeviceModel,
  entry: number,
  requested: number,
  deviceFree: number,
  rawStream: number,
  capacity: number | undefined,
  held: (entry: number) => HeldMemory,
): OomReport {
  // Without a request (a dump-time check for the largest that fits) the question is a large one.
  const pool = requested > 0 && requested <= SMALL_REQUEST_LIMIT ? 'small' : 'large';
  // The curves at the OOM only (one walk from the nearest mark), not walked whole.
  const at = entry >= 0 ? d.totals.curvesAfterEach([entry]) : undefined;
  const reserved = at ? at.reserved[0]! : d.totals.end.reserved;
  const allocated = at ? at.allocated[0]! : d.totals.end.allocated;
  const state = entry >= 0 ? freeStateAfter(s, d, entry) : dumpFreeState(s, d);
  const lists = freeListsOf(state, pool);
  const own = lists.find((g) => g.stream === rawStream);
  if (entry >= 0 && capacity !== undefined && capacity < reserved + deviceFree)
    throw new SnapshotError(
      `--capacity ${formatBytes(capacity)} is below the ${formatBytes(reserved + deviceFree)} device ${d.device} had at the oom at entry ${formatCount(entry)} (reserved + CUDA free): give the GPU's total memory (e.g. 80GiB)`,
    );
  const outside =
    capacity === undefined || Number.isNaN(deviceFree) ? null : capacity - reserved - deviceFree;
  const figures: Figures = {
    entry,
    requested_bytes: requested,
    pool,
    device_free_bytes: deviceFree,
    reserved_bytes: reserved,
    allocated_bytes: allocated,
    cached_free_bytes: lists.reduce((n, g) => n + g.free_bytes, 0),
    largest_free_block: own?.largest_free_block ?? 0,
    capacity_bytes: capacity ?? null,
    outside_bytes: outside,
    stream: rawStream,
    free_lists: lists,
  };
  const all = entry >= 0 && d.trace.stack[entry]! >= 0 ? s.stacks.frames(d.trace.stack[entry]!) : [];
  const request = userFirstStack(all);
  const fitting = entry < 0 && requested === 0 ? largestFitting(state, own, deviceFree) : null;
  const judged = fitting === null ? judge(figures) : headroom(figures, fitting, own);
  const expandable = s.allocatorSettings?.expandable_segments === true;
  const suggestions = suggestionsFor(
    judged.verdict,
    { ...figures, segments: state.segments, expandable },
    d.device,
  );
  return {
    time_us: entry >= 0 && !Number.isNaN(d.trace.timeUs[entry]!) ? d.trace.timeUs[entry]! : null,
    ...figures,
    exact_free_blocks: state.exact,
    ...judged,
    largest_fitting_request_bytes: fitting,
    stack: request.frames,
    stack_inner: request.inner,
    stack_frames: all.length,
    last_stack_before: all.length === 0 && entry >= 0 ? lastStackBefore(s, d, entry) : null,
    held: held(entry >= 0 ? entry : d.trace.length - 1),
    suggestions,
    settings: suggestions.map((x) => (x.setting === null ? x.why : `${x.setting} — ${x.why}`)),
  };
}

export interface LastStack {
  entry: number;
  /** Microseconds between it and the request; null without times. */
  before_us: number | null;
  stack: KindedFrame<Frame>[];
  stack_inner: KindedFrame<Frame>[];
}

/** How far back to look: a backward pass's frameless run is thousands of entries, not millions. */
const LOOK_BACK = 1_000_000;

function lastStackBefore(s: Snapshot, d: DeviceModel, entry: number): LastStack | null {
  const stop = Math.max(0, entry - LOOK_BACK);
  for (let k = entry - 1; k >= stop; k--) {
    const id = d.trace.stack[k]!;
    const frames = id >= 0 ? s.stacks.frames(id) : [];
    if (frames.length === 0) continue;
    const { frames: stack, inner } = userFirstStack(frames);
    const gap = d.trace.timeUs[entry]! - d.trace.timeUs[k]!;
    return { entry: k, before_us: Number.isNaN(gap) ? null : gap, stack, stack_inner: inner };
  }
  return null;
}

/** `round_size` at default settings: up to a multiple of 512 bytes (allocator-spec §2). */
function roundRequest(bytes: number): number {
  return Math.max(512, Math.ceil(bytes / 512) * 512);
}

/**
 * What a trace without an `oom` entry says, for the file's producer. torch_npu records `oom` only
 * when its caching allocator gives up (NPUCachingAllocator.cpp, `malloc`); an OOM raised inside
 * CANN (a failed aclrtMalloc elsewhere, an operator's own memory) leaves none, so the absence does
 * not mean the process never ran out of memory.
 */
export function noOomEntryText(s: Snapshot, d: DeviceModel): string {
  const window = `the trace's ${plural(d.trace.length, 'entry')}`;
  if (s.producer.kind !== 'torch_npu') return `no OOM in ${window}`;
  return `no oom entry in ${window}; torch_npu records one only when its caching allocator fails, and an OOM raised inside CANN leaves none, so this does not show that the process never ran out of memory`;
}

/** The default pool's free lists for requests of this size class. */
function freeListsOf(state: FreeState, pool: string): FreeGroup[] {
  return state.groups.filter((g) => g.pool === pool && g.private_pool === null);
}

const SEGMENT_ROUNDING = 2 * 2 ** 20;

/**
 * The largest request on the checked stream that would fit at the dump: the largest free block,
 * or a new segment from what is unreserved plus the wholly free segments an OOM flush returns.
 */
function largestFitting(state: FreeState, own: FreeGroup | undefined, unreserved: number): number {
  const segment = Math.floor((unreserved + state.releasable_bytes) / SEGMENT_ROUNDING) * SEGMENT_ROUNDING;
  return Math.max(own?.largest_free_block ?? 0, segment);
}

function headroom(f: Figures, fitting: number, own: FreeGroup | undefined): ReturnType<typeof judge> {
  const fb = formatBytes;
  const stream = `stream ${formatStream(f.stream)}`;
  return {
    verdict: 'would fit',
    headline: `at the dump, a request of up to ${fb(fitting)} would fit on ${stream} (give --request to judge a size).`,
    explanation: [
      `a request of up to ${fb(fitting)} would fit at the dump: the largest free block on ${stream} is ${fb(own?.largest_free_block ?? 0)}, and capacity − reserved leaves ${fb(f.device_free_bytes)} for a new segment (plus the wholly free segments an OOM flush gives back). Give --request to judge a given size.`,
      `PyTorch had reserved ${fb(f.reserved_bytes)}, of which ${fb(f.allocated_bytes)} allocated.`,
      'this check assumes nothing outside PyTorch holds device memory; the CUDA context alone takes 0.3-1 GiB.',
    ],
    readings: [],
    deciding_capacity_bytes: null,
  };
}

/** What would help for this verdict; replays only for an oom the trace holds (a check has no request to replay). */
function suggestionsFor(verdict: OomVerdict, f: Figures & FailureFigures, device: number): OomSuggestion[] {
  const replay = f.entry >= 0;
  const tail = `${f.capacity_bytes === null ? '' : ` --capacity ${f.capacity_bytes}`}${device === 0 ? '' : ` --device ${device}`}`;
  const only = (args: string) => (replay ? args : '');
  switch (verdict) {
    case 'fragmentation':
      return fragmentationSuggestions(f, tail).map((x) => ({
        ...x,
        simulate: only(x.simulate),
      }));
    case 'exhaustion':
      return [
        {
          setting: null,
          why: 'no allocator setting makes room for live tensors (the sweep replays the standard ones): reduce batch size or sequence length, use activation checkpointing, or shard parameters/optimizer state',
          simulate: only(`--sweep${tail}`),
        },
      ];
    case 'outside PyTorch':
      return [
        {
          setting: null,
          why: `free the ${formatBytes(f.outside_bytes!)} held outside PyTorch: other processes on the GPU (nvidia-smi), NCCL and cuBLAS workspaces, a second framework; the replay gives PyTorch the whole GPU`,
          simulate: only(`--capacity ${f.capacity_bytes}${device === 0 ? '' : ` --device ${device}`}`),
        },
      ];
    default:
      return [];
  }
}
