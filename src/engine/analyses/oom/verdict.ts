/**
 * The verdict on one failed request, from the figures the file holds (allocator-spec §3.8, §9.9):
 * what CUDA reported free (`device_free`), what PyTorch had reserved, its free blocks, and, when
 * the user gives it, the GPU's total memory. Without that total the file cannot tell a small GPU
 * filled by PyTorch from a large one filled by something else; where reserved + free is far below
 * any current GPU, both readings are given with the figure that decides between them.
 */
import { formatBytes, formatBytesPair } from '../../base/format.js';
import type { FreeGroup } from '../../derived/state/free-blocks.js';
import { listName } from '../fragmentation/fragmentation.js';

export type OomVerdict =
  /** Cached free memory would have covered the request, but no block of its pool and stream did. */
  | 'fragmentation'
  /** The live tensors needed more than PyTorch's cache and the device's free memory together. */
  | 'exhaustion'
  /** Memory held outside PyTorch's allocator (other processes, NCCL, the CUDA context) caused it. */
  | 'outside PyTorch'
  /** CUDA reported enough free memory: a memory-fraction limit or another cudaMalloc failure refused it. */
  | 'not out of device memory'
  /**
   * No capacity given, and reserved + free is far below any current GPU: outside PyTorch on any
   * GPU of at least `OomReport.deciding_capacity_bytes`, else (a GPU that small) `readings[1]`.
   */
  | 'undetermined'
  /** A check of the dump-time state (no oom in the trace): the request would have fit. */
  | 'would fit';

/** One way to read an undetermined OOM, and the GPU it holds for. */
export interface OomReading {
  /** "the GPU has 4.71 GiB or more", "the GPU has only about 2.38 GiB". */
  if: string;
  verdict: OomVerdict;
  /** The reading's sentence, with its arithmetic. */
  says: string;
}

/** The figures a verdict is judged on (fields of OomReport). */
export interface Figures {
  entry: number;
  requested_bytes: number;
  pool: 'large' | 'small';
  device_free_bytes: number;
  reserved_bytes: number;
  allocated_bytes: number;
  cached_free_bytes: number;
  largest_free_block: number;
  capacity_bytes: number | null;
  outside_bytes: number | null;
  /** Raw stream of the request, and the pool's free lists (one per stream). */
  stream: number;
  free_lists: FreeGroup[];
}

export interface Judgement {
  verdict: OomVerdict;
  headline: string;
  explanation: string[];
  readings: OomReading[];
  deciding_capacity_bytes: number | null;
}

const GiB = 2 ** 30;
/** Memory outside the allocator above which it is named as the cause (a CUDA context is ~0.3-1 GiB). */
export const OUTSIDE_NOTABLE = 2 * GiB;
/**
 * The smallest memory of a current GPU PyTorch trains or serves on: 8 GiB consumer cards (RTX
 * 4060, 5060), 16 GiB and more in datacenters (T4 16, L4 24, A100 40/80, H100 80). Laptop and
 * older cards with 4-6 GiB exist: they are the "unless the GPU is that small" reading.
 */
export const SMALLEST_CURRENT_GPU = 8 * GiB;
/**
 * Below this, reserved + free leaves at least OUTSIDE_NOTABLE unaccounted even on the smallest
 * current GPU: more than a CUDA context takes, so the capacity decides the verdict.
 */
export const UNDETERMINED_BELOW = SMALLEST_CURRENT_GPU - OUTSIDE_NOTABLE;

/**
 * Not out of memory when CUDA had room; memory outside PyTorch when it is large and the request
 * would have fit without it (whatever the allocator's own state); else fragmentation when the
 * cached free memory would have covered the request but no block of its stream did; else exhaustion.
 */
export function verdictOf(r: Figures): OomVerdict {
  const S = r.requested_bytes;
  if (r.device_free_bytes >= S) return r.entry < 0 ? 'would fit' : 'not out of device memory';
  // A check of the dump (no recorded failure): a free block on the request's stream serves it.
  if (r.entry < 0 && r.largest_free_block >= S) return 'would fit';
  if (
    r.outside_bytes !== null &&
    r.outside_bytes >= OUTSIDE_NOTABLE &&
    r.outside_bytes + r.device_free_bytes >= S
  )
    return 'outside PyTorch';
  if (r.cached_free_bytes + r.device_free_bytes >= S && r.largest_free_block < S) return 'fragmentation';
  return 'exhaustion';
}

/**
 * The verdict, its one-sentence headline, and the explanation led by the sentence that proves it:
 * the figures of the request second, what did not decide it (a small outside share, say) after.
 */
export function judge(r: Figures): Judgement {
  const accounted = r.reserved_bytes + r.device_free_bytes;
  const blind = verdictOf(r);
  const undetermined =
    r.entry >= 0 &&
    r.capacity_bytes === null &&
    accounted < UNDETERMINED_BELOW &&
    blind !== 'not out of device memory';
  if (undetermined) return undeterminedJudgement(r, blind);
  return { verdict: blind, ...wordsFor(r, blind), readings: [], deciding_capacity_bytes: null };
}

function figuresLine(r: Figures): string {
  const fb = formatBytes;
  return `requested ${fb(r.requested_bytes)} (${r.pool} pool); ${r.entry < 0 ? 'capacity − reserved left' : 'CUDA reported'} ${fb(r.device_free_bytes)} free; PyTorch had reserved ${fb(r.reserved_bytes)}, of which ${fb(r.allocated_bytes)} allocated.`;
}

function outsideLine(r: Figures): string {
  const fb = formatBytes;
  if (r.entry < 0)
    return 'this check assumes nothing outside PyTorch holds device memory; the CUDA context alone takes 0.3-1 GiB.';
  if (r.outside_bytes === null)
    return "pass --capacity (the GPU's total memory) to measure what was held outside PyTorch.";
  return `capacity ${fb(r.capacity_bytes!)} − reserved ${fb(r.reserved_bytes)} − free ${fb(r.device_free_bytes)} = ${fb(r.outside_bytes)} held outside PyTorch's allocator (CUDA context, NCCL buffers, other processes).`;
}

/** A block on another stream that would have fitted: the allocator cannot use it across streams. */
function otherStreams(r: Figures): string[] {
  const fit = r.free_lists.find((g) => g.stream !== r.stream && g.largest_free_block >= r.requested_bytes);
  if (fit === undefined) return [];
  return [
    `a free block of ${formatBytes(fit.largest_free_block)} sat in the ${listName(fit)} list, but the allocator only reuses a block for requests on its own stream.`,
  ];
}

function wordsFor(r: Figures, verdict: OomVerdict): { headline: string; explanation: string[] } {
  const fb = formatBytes;
  const S = r.requested_bytes;
  const short = `${fb(r.cached_free_bytes)} cached + ${fb(r.device_free_bytes)} free < ${fb(S)} requested`;
  switch (verdict) {
    case 'would fit':
      if (r.largest_free_block >= S)
        return {
          headline: `would fit: a free block of ${fb(r.largest_free_block)} on the request's stream ≥ ${fb(S)} requested.`,
          explanation: [
            `the largest free block on the request's stream, ${fb(r.largest_free_block)} ≥ ${fb(S)} requested: the cache would serve it.`,
            figuresLine(r),
            outsideLine(r),
          ],
        };
      return {
        headline: `would fit: capacity − reserved leaves ${fb(r.device_free_bytes)} ≥ ${fb(S)} requested.`,
        explanation: [
          `${fb(r.device_free_bytes)} unreserved ≥ ${fb(S)} requested: a new segment would serve it.`,
          figuresLine(r),
          outsideLine(r),
        ],
      };
    case 'not out of device memory':
      return {
        headline: `not out of device memory: CUDA reported ${fb(r.device_free_bytes)} free ≥ ${fb(S)} requested, so a memory-fraction limit or another cudaMalloc failure refused it.`,
        explanation: [
          `${fb(r.device_free_bytes)} free ≥ ${fb(S)} requested: the device had room; a memory fraction limit (torch.cuda.set_per_process_memory_fraction) or a failed cudaMalloc for another reason refused it.`,
          figuresLine(r),
        ],
      };
    case 'outside PyTorch':
      return {
        headline: `outside PyTorch: ${fb(r.outside_bytes!)} of the ${fb(r.capacity_bytes!)} GPU was held outside PyTorch's allocator; without it the ${fb(S)} request would have fit.`,
        explanation: [
          `${outsideLine(r).replace(/\.$/, '')}: without it the request would have fit (${fb(r.outside_bytes!)} + ${fb(r.device_free_bytes)} free ≥ ${fb(S)}).`,
          figuresLine(r),
          `PyTorch's own memory could not serve it (${short}); look for other processes on the GPU (nvidia-smi) and NCCL/cuBLAS workspaces.`,
        ],
      };
    case 'fragmentation': {
      const [largest, requested] = formatBytesPair(r.largest_free_block, S);
      return {
        headline: `fragmentation: ${fb(r.cached_free_bytes)} sat free in reserved segments of the ${r.pool} pool, but the largest free block on the request's stream was ${largest} < ${requested} requested.`,
        explanation: [
          `${fb(r.cached_free_bytes)} sat cached but unused in reserved segments of the ${r.pool} pool, and ${fb(r.cached_free_bytes)} + ${fb(r.device_free_bytes)} free ≥ ${fb(S)}, but the largest free block on the request's stream was ${largest} < ${requested}: reserved memory was fragmented.`,
          figuresLine(r),
          ...otherStreams(r),
          outsideLine(r),
        ],
      };
    }
    default:
      return {
        headline: `exhaustion: the ${fb(S)} request exceeded PyTorch's ${fb(r.cached_free_bytes)} cached and ${r.entry < 0 ? 'the' : "CUDA's"} ${fb(r.device_free_bytes)} free memory together, with ${fb(r.allocated_bytes)} of tensors live.`,
        explanation: [
          `${short}: the live tensors needed more memory than the device had.`,
          figuresLine(r),
          outsideLine(r),
        ],
      };
  }
}

/**
 * Reserved + free far below any current GPU, no capacity: on a GPU of at least `deciding` bytes
 * (reserved + the request, and OUTSIDE_NOTABLE above what the file accounts for) the memory
 * outside PyTorch caused it; only a GPU about as small as reserved + free makes it `blind`.
 */
function undeterminedJudgement(r: Figures, blind: OomVerdict): Judgement {
  const fb = formatBytes;
  const accounted = r.reserved_bytes + r.device_free_bytes;
  const deciding = Math.max(r.reserved_bytes + r.requested_bytes, accounted + OUTSIDE_NOTABLE);
  const onSmallest = Math.max(SMALLEST_CURRENT_GPU, deciding);
  const small = wordsFor(r, blind);
  const outside: OomReading = {
    if: `the GPU has ${fb(deciding)} or more`,
    verdict: 'outside PyTorch',
    says: `the GPU's memory less ${fb(accounted)} was held outside PyTorch's allocator (${fb(onSmallest - accounted)} of a GPU of ${fb(onSmallest)}), and without it the ${fb(r.requested_bytes)} request would have fit: outside PyTorch.`,
  };
  const smallGpu: OomReading = {
    if: `the GPU has only about ${fb(accounted)}`,
    verdict: blind,
    says: small.explanation[0]!,
  };
  return {
    verdict: 'undetermined',
    headline: `undetermined: PyTorch had ${fb(r.reserved_bytes)} reserved and CUDA ${fb(r.device_free_bytes)} free, ${fb(accounted)} in all, far below any current GPU (8 GiB or more), so most of the device was held outside PyTorch unless the GPU really has only about ${fb(accounted)} (then ${blind}); the GPU's total memory decides (give it with --capacity).`,
    explanation: [
      `reserved ${fb(r.reserved_bytes)} + free ${fb(r.device_free_bytes)} = ${fb(accounted)}, far below the memory of any current GPU (8 GiB or more): the rest was held outside PyTorch, unless the GPU is that small. The GPU's total memory decides; give it with --capacity (e.g. --capacity 80GiB).`,
      `if ${outside.if}: ${outside.says}`,
      `if ${smallGpu.if}: ${smallGpu.says}`,
      figuresLine(r),
    ],
    readings: [outside, smallGpu],
    deciding_capacity_bytes: deciding,
  };
}
