/** Size rules of the caching allocator (allocator-spec §2), for any configuration. */
import type { SimSettings } from './settings.js';

export const MIN_BLOCK = 512;
export const SMALL_SIZE = 1 << 20;
export const SMALL_BUFFER = 2 << 20;
export const MIN_LARGE_ALLOC = 10 << 20;
export const ROUND_LARGE = 2 << 20;
export const MiB = 1 << 20;
export const DIVISION_INTERVALS = 16;

/**
 * `round_size`: a request in bytes → the block size the allocator looks for. torch_npu's adds its
 * pad first (Ascend/pytorch, torch_npu/csrc/core/npu/NPUCachingAllocator.cpp, `round_size`:
 * `size += AddPadSize()`), and the pool is chosen on the result (`get_pool`, `kSmallSize`).
 */
export function roundSize(request: number, s: SimSettings): number {
  const size = request + s.pad;
  if (size < MIN_BLOCK) return MIN_BLOCK;
  const div = s.divisions[divisionIndex(size)]!;
  if (s.version.unroundedDivisionOne) {
    // ≤ 2.3: any non-zero divisions entry took the power-2 path, and 1 left the size as it was.
    if (div > 0) return div <= 1 ? size : nextDivision(size, div);
  } else if (div > 1 && size > MIN_BLOCK * div) {
    return nextDivision(size, div);
  }
  return MIN_BLOCK * Math.ceil(size / MIN_BLOCK);
}

/** Interval index of the divisions table: [2^(20+i), 2^(21+i)), clamped to 0..15. */
function divisionIndex(size: number): number {
  return Math.min(DIVISION_INTERVALS - 1, Math.max(0, floorLog2(size) - 20));
}

const TWO_32 = 2 ** 32;
/** 2^k by table: `2 ** k` with a variable k is a call into the C library's pow, per malloc. */
const POW2 = Float64Array.from({ length: 64 }, (_, k) => 2 ** k);

/**
 * floor(log2(x)) for a positive integer below 2^53, exact: Math.log2 rounds up just below a
 * power, and costs a call per malloc where clz32 is one instruction.
 */
export function floorLog2(x: number): number {
  return x < TWO_32 ? 31 - Math.clz32(x) : 63 - Math.clz32(Math.floor(x / TWO_32));
}

/** `roundup_power2_next_division`: the next of `div` equal steps between two powers of two. */
function nextDivision(size: number, div: number): number {
  const floor = POW2[floorLog2(size)]!;
  if (floor === size) return size;
  const step = floor / POW2[floorLog2(div)]!;
  if (step < 1) return floor * 2;
  return Math.ceil(size / step) * step;
}

/** Size of a new classic segment (the cudaMalloc size) for a rounded request. */
export function allocationSize(size: number, s: SimSettings): number {
  if (size <= SMALL_SIZE) return SMALL_BUFFER;
  if (size < MIN_LARGE_ALLOC) return s.largeSegmentSize;
  return ROUND_LARGE * Math.ceil(size / ROUND_LARGE);
}

export function isSmallSize(size: number): boolean {
  return size <= SMALL_SIZE;
}
