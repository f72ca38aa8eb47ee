/** Size rules of the caching allocator (allocator-spec §2), default settings: the generator's
 *  subset of the simulator's rules, with the same constants. */
import {
  MIN_BLOCK,
  MIN_LARGE_ALLOC,
  ROUND_LARGE,
  SMALL_BUFFER,
  SMALL_SIZE,
} from '../../src/engine/simulate/index.js';

export { MIN_BLOCK, MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE };
/** Default `large_segment_size`: 20 MiB. */
export const LARGE_BUFFER = 20 << 20;

/** `round_size` without power-of-two divisions. */
export function roundSize(requested: number): number {
  if (requested < MIN_BLOCK) return MIN_BLOCK;
  return Math.ceil(requested / MIN_BLOCK) * MIN_BLOCK;
}

/** Size of a new classic segment (cudaMalloc) for a rounded request. */
export function allocationSize(size: number): number {
  if (size <= SMALL_SIZE) return SMALL_BUFFER;
  if (size < MIN_LARGE_ALLOC) return LARGE_BUFFER;
  return Math.ceil(size / ROUND_LARGE) * ROUND_LARGE;
}

export function isSmall(size: number): boolean {
  return size <= SMALL_SIZE;
}

/** `should_split`: the remainder of a reused or new block goes back to the pool when large enough. */
export function shouldSplit(blockSize: number, size: number, small: boolean, expandable: boolean): boolean {
  const remaining = blockSize - size;
  if (small || expandable) return remaining >= MIN_BLOCK;
  return remaining > SMALL_SIZE;
}
