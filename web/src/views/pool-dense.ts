/**
 * Above this many blocks a segment's bar in the pool state is one canvas instead of a button per
 * block (a small-pool segment of 2 MiB can hold thousands of 512-byte blocks).
 */
export const DENSE_BLOCKS = 128;
