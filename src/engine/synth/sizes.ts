/** Size rules of the caching allocator (allocator-spec §2), default settings. */

export const MIN_BLOCK = 512;
export const SMALL_SIZE = 1 << 20;
export const SMALL_BUFFER = 2 << 20;
export const MIN_LARGE_ALLOC = 10 << 20;
export const LARGE_BUFFER = 20 << 20;
export const ROUND_LARGE = 2 << 20;

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
