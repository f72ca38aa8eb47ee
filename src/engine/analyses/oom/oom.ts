import { formatBytes, formatBytesPair } from '../../format.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';
import { listName } from '../fragmentation/fragmentation.js';
import { dumpFreeState, type FreeGroup, type FreeState, freeStateAfter } from '../state/free-blocks.js';
import { SMALL_REQUEST_LIMIT } from '../state/trace-window.js';

export type OomVerdict = 'fragmentation' | 'exhaustion' | 'outside PyTorch' | 'not out of device memory';

export interface OomReport {
  /** Trace entry of the `oom`, or -1 for a check of the dump-time state against --capacity. */
  entry: number;
  time_us: number | null;
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
  capacity_bytes: number | null;
  /** capacity − reserved − device_free: CUDA context, NCCL, other processes. null without capacity. */
  outside_bytes: number | null;
  verdict: OomVerdict;
  /** The verdict in words, with the arithmetic. */
  explanation: string[];
  /** Allocator settings that would help, each with why. */
  settings: string[];
}

/** Memory outside the allocator above which it is named as the cause (a CUDA context is ~0.3-1 GiB). */
const OUTSIDE_NOTABLE = 2 * 1024 ** 3;

/**
 * Why each `oom` of the trace happened: true exhaustion, fragmentation of reserved memory, or
 * memory held outside PyTorch's allocator. With no `oom` entry and a capacity, the dump-time
 * state is checked the same way for a request of `requestBytes`.
 */
export function oomReports(s: Snapshot, d: DeviceModel, capacity?: number, requestBytes = 0): OomReport[] {
  const reports: OomReport[] = [];
  for (let i = 0; i < d.trace.length; i++) {
    if (d.trace.action[i] !== Action.oom) continue;
    reports.push(
      report(s, d, i, d.trace.size[i]!, d.trace.deviceFree?.[i] ?? Number.NaN, d.trace.stream[i]!, capacity),
    );
  }
  if (reports.length === 0 && capacity !== undefined) {
    const r = d.totals.end.reserved;
    reports.push(report(s, d, -1, requestBytes, capacity - r, 0, capacity));
  }
  return reports;
}

function report(
  s: Snapshot,
  d: DeviceModel,
  entry: number,
  requested: number,
  deviceFree: number,
  stream: number,
  capacity: number | undefined,
): OomReport {
  const pool = requested <= SMALL_REQUEST_LIMIT ? 'small' : 'large';
  const reserved = entry >= 0 ? d.totals.reserved[entry]! : d.totals.end.reserved;
  const allocated = entry >= 0 ? d.totals.allocated[entry]! : d.totals.end.allocated;
  const rawStream = s.traceColumns.streams[stream] ?? 0;
  const state = entry >= 0 ? freeStateAfter(s, d, entry) : dumpFreeState(s, d);
  const lists = freeListsOf(state, pool);
  const own = lists.find((g) => g.stream === rawStream);
  const outside =
    capacity === undefined || Number.isNaN(deviceFree) ? null : capacity - reserved - deviceFree;
  const r: OomReport = {
    entry,
    time_us: entry >= 0 && !Number.isNaN(d.trace.timeUs[entry]!) ? d.trace.timeUs[entry]! : null,
    requested_bytes: requested,
    pool,
    stream: rawStream,
    device_free_bytes: deviceFree,
    reserved_bytes: reserved,
    allocated_bytes: allocated,
    cached_free_bytes: lists.reduce((n, g) => n + g.free_bytes, 0),
    largest_free_block: own?.largest_free_block ?? 0,
    free_lists: lists,
    exact_free_blocks: state.exact,
    capacity_bytes: capacity ?? null,
    outside_bytes: outside,
    verdict: 'exhaustion',
    explanation: [],
    settings: [],
  };
  judge(r);
  return r;
}

/** The default pool's free lists for requests of this size class. */
function freeListsOf(state: FreeState, pool: string): FreeGroup[] {
  return state.groups.filter((g) => g.pool === pool && g.private_pool === null);
}

/** A block on another stream that would have fitted: the allocator cannot use it across streams. */
function otherStreams(r: OomReport): void {
  const fit = r.free_lists.find((g) => g.stream !== r.stream && g.largest_free_block >= r.requested_bytes);
  if (fit === undefined) return;
  r.explanation.push(
    `a free block of ${formatBytes(fit.largest_free_block)} sat in the ${listName(fit)} list, but the allocator only reuses a block for requests on its own stream.`,
  );
}

/**
 * The verdict, and the explanation led by the sentence that proves it: the figures of the
 * request come second, and what did not decide it (a small outside share, say) after that.
 */
function judge(r: OomReport): void {
  r.verdict = verdictOf(r);
  const S = r.requested_bytes;
  const fb = formatBytes;
  const e = r.explanation;
  const figures = `requested ${fb(S)} (${r.pool} pool); CUDA reported ${fb(r.device_free_bytes)} free; PyTorch had reserved ${fb(r.reserved_bytes)}, of which ${fb(r.allocated_bytes)} allocated.`;
  const outside =
    r.outside_bytes === null
      ? "pass --capacity (the GPU's total memory) to measure what was held outside PyTorch."
      : `capacity ${fb(r.capacity_bytes!)} − reserved ${fb(r.reserved_bytes)} − free ${fb(r.device_free_bytes)} = ${fb(r.outside_bytes)} held outside PyTorch's allocator (CUDA context, NCCL buffers, other processes).`;
  const short = `${fb(r.cached_free_bytes)} cached + ${fb(r.device_free_bytes)} free < ${fb(S)} requested`;
  switch (r.verdict) {
    case 'not out of device memory':
      e.push(
        `${fb(r.device_free_bytes)} free ≥ ${fb(S)} requested: the device had room; a memory fraction limit (torch.cuda.set_per_process_memory_fraction) or a failed cudaMalloc for another reason refused it.`,
        figures,
      );
      return;
    case 'outside PyTorch':
      e.push(
        `${outside.replace(/\.$/, '')}: without it the request would have fit (${fb(r.outside_bytes!)} + ${fb(r.device_free_bytes)} free ≥ ${fb(S)}).`,
        figures,
        `PyTorch's own memory could not serve it (${short}); look for other processes on the GPU (nvidia-smi) and NCCL/cuBLAS workspaces.`,
      );
      break;
    case 'fragmentation': {
      const [largest, requested] = formatBytesPair(r.largest_free_block, S);
      e.push(
        `${fb(r.cached_free_bytes)} sat cached but unused in reserved segments of the ${r.pool} pool, and ${fb(r.cached_free_bytes)} + ${fb(r.device_free_bytes)} free ≥ ${fb(S)}, but the largest free block on the request's stream was ${largest} < ${requested}: reserved memory was fragmented.`,
        figures,
      );
      otherStreams(r);
      e.push(outside);
      r.settings.push(
        'expandable_segments:True — segments grow in place instead of needing one contiguous free block.',
        'max_split_size_mb:<N> — stops large cached blocks being split, so big requests find whole blocks.',
        'garbage_collection_threshold:0.6 — returns unused cached blocks before the pool fills.',
      );
      break;
    }
    default:
      e.push(`${short}: the live tensors needed more memory than the device had.`, figures, outside);
      r.settings.push(
        'none helps much: reduce batch size or sequence length, use activation checkpointing, or shard parameters/optimizer state.',
      );
  }
}

/**
 * Not out of memory when CUDA had room; memory outside PyTorch when it is large and the request
 * would have fit without it (whatever the allocator's own state); else fragmentation when the
 * cached free memory would have covered the request but no block of its stream did; else exhaustion.
 */
function verdictOf(r: OomReport): OomVerdict {
  const S = r.requested_bytes;
  if (r.device_free_bytes >= S) return 'not out of device memory';
  if (
    r.outside_bytes !== null &&
    r.outside_bytes >= OUTSIDE_NOTABLE &&
    r.outside_bytes + r.device_free_bytes >= S
  )
    return 'outside PyTorch';
  if (r.cached_free_bytes + r.device_free_bytes >= S && r.largest_free_block < S) return 'fragmentation';
  return 'exhaustion';
}
