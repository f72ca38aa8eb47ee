/**
 * What would help against an OOM, each with the `memlens simulate` arguments that test it on the
 * recorded requests. Settings are derived from the allocator's rules (allocator-spec §3) and the
 * figures of the failure, never left as a placeholder.
 */
import { formatBytes, plural } from '../../base/format.js';
import type { SegmentGaps } from '../../derived/state/free-blocks.js';
import { SMALL_REQUEST_LIMIT } from '../../derived/state/trace-window.js';

const MiB = 2 ** 20;
/** PyTorch 2.1–2.6 refuse max_split_size_mb ≤ 20 (later versions: below large_segment_size_mb, 20). */
const MIN_MAX_SPLIT_MB = 21;
/** Requests of at least 10 MiB get a segment of their own size rounded to 2 MiB; smaller large ones 20 MiB. */
const MIN_LARGE_ALLOC = 10 * MiB;

export interface OomSuggestion {
  /** PYTORCH_CUDA_ALLOC_CONF setting to try; null: a change to the program, not the allocator. */
  setting: string | null;
  /** Why it would help, with the figures it was derived from. */
  why: string;
  /** `memlens simulate FILE …` arguments that test it ('' when no replay can). */
  simulate: string;
}

/** What a suggestion needs to know of the failure. */
export interface FailureFigures {
  requested_bytes: number;
  pool: 'large' | 'small';
  /** Raw stream of the request. */
  stream: number;
  device_free_bytes: number;
  /** Reserved segments then, with their largest gaps. */
  segments: SegmentGaps[];
  /** The recording already ran with expandable segments (suggesting them again says nothing). */
  expandable: boolean;
}

/** The cudaMalloc a large-pool request needs (allocator-spec §2.4). */
function segmentFor(requested: number): number {
  return requested < MIN_LARGE_ALLOC ? 20 * MiB : Math.ceil(requested / (2 * MiB)) * 2 * MiB;
}

/**
 * max_split_size_mb for a request that failed on fragmentation. With it set, a block of that size
 * or more is never split (should_split), so in classic segments it stays a whole segment, and when
 * a cudaMalloc fails the allocator gives such free blocks of the request's pool and stream back to
 * CUDA, largest first (release_available_cached_blocks), before retrying. The value is the largest
 * whole MiB at which the free blocks that large, with what CUDA had free, cover the new segment the
 * request needs: the segments' largest gaps, largest first, until they do. (One gap per segment:
 * a lower bound, so the value errs small, which releases more.) Null when no value above PyTorch's
 * minimum covers it.
 */
export function maxSplitFor(f: FailureFigures): { mb: number; blocks: number; bytes: number } | null {
  if (f.pool === 'small' || f.requested_bytes <= SMALL_REQUEST_LIMIT) return null;
  const need = segmentFor(f.requested_bytes) - f.device_free_bytes;
  const gaps = f.segments
    .filter((g) => g.pool === 'large' && g.private_pool === null && g.stream === f.stream && !g.expandable)
    .map((g) => g.max_gap)
    .sort((a, b) => b - a);
  let bytes = 0;
  for (let k = 0; k < gaps.length; k++) {
    bytes += gaps[k]!;
    if (bytes < need) continue;
    const mb = Math.floor(gaps[k]! / MiB);
    return mb >= MIN_MAX_SPLIT_MB ? { mb, blocks: k + 1, bytes } : null;
  }
  return null;
}

/** Suggestions for a fragmentation OOM: grow in place, or keep large blocks whole to give back. */
export function fragmentationSuggestions(f: FailureFigures, capacityArgs: string): OomSuggestion[] {
  const out: OomSuggestion[] = [];
  if (!f.expandable)
    out.push({
      setting: 'expandable_segments:True',
      why: 'segments grow in place by mapping pages, so a request needs free address space, not one contiguous free block',
      simulate: `--set expandable_segments:True${capacityArgs}`,
    });
  const split = maxSplitFor(f);
  if (split !== null) {
    const setting = `max_split_size_mb:${split.mb}`;
    out.push({
      setting,
      why: `blocks of ${split.mb} MiB or more are then never split, so they stay whole segments that the allocator gives back to CUDA when a cudaMalloc fails; the ${plural(split.blocks, 'free block')} that large on the request's stream (${formatBytes(split.bytes)}) and ${formatBytes(f.device_free_bytes)} free cover the ${formatBytes(segmentFor(f.requested_bytes))} segment the request needs (block sizes as recorded without the setting: the replay checks it)`,
      simulate: `--set ${setting}${capacityArgs}`,
    });
  }
  return out;
}
