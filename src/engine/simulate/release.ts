/**
 * The allocator giving memory back to CUDA (allocator-spec §3.4-§3.6): the full flush
 * (empty_cache and the last OOM retry), the oversize release under `max_split_size_mb`, and the
 * garbage collector under `garbage_collection_threshold`.
 */
import { Action } from '../model/trace-columns.js';
import type { SimAllocator } from './allocator.js';
import { unmapBlock } from './expandable.js';

/** Pools the flush releases: the default large and small pools (private pools stay in use). */
const DEFAULT_POOLS = [0, 1];

/** `release_block`: cudaFree of a whole free classic segment. */
function releaseBlock(a: SimAllocator, b: number): void {
  const bl = a.blocks;
  a.removeFree(b);
  const size = bl.size[b]!;
  a.segments.drop(bl.segment[b]!);
  a.stats.onSegmentFree(size);
  a.emit(Action.segment_free, bl.addr[b]!, size, bl.stream[b]!);
  bl.release(b);
}

function isExpandable(a: SimAllocator, b: number): boolean {
  return a.segments.expandable[a.blocks.segment[b]!]!;
}

/** Free blocks of a pool in the free set's order: stream (raw value), size, address. */
function freeBlocksOf(a: SimAllocator, pool: number): number[] {
  const out: number[] = [];
  for (const stream of a.streamOrder) {
    const index = a.free[pool]![stream];
    if (index !== undefined) for (const b of index.snapshot()) out.push(b);
  }
  return out;
}

/**
 * `release_cached_blocks`: completes every pending free, cudaFrees every wholly free classic
 * segment and unmaps the whole free pages of expandable segments.
 */
export function releaseCached(a: SimAllocator): void {
  for (const b of [...a.pending]) a.completeFree(b);
  for (const pool of DEFAULT_POOLS) {
    const unmap: number[] = [];
    for (const b of freeBlocksOf(a, pool)) {
      if (isExpandable(a, b)) unmap.push(b);
      else if (!a.blocks.isSplit(b)) releaseBlock(a, b);
    }
    for (const b of unmap) unmapBlock(a, b);
  }
}

/**
 * `release_available_cached_blocks` (only with max_split_size): one free block of the stream at
 * least as large as the request, else oversize blocks largest first until enough is freed.
 */
export function releaseAvailable(a: SimAllocator, pool: number, stream: number, size: number): boolean {
  const maxSplit = a.settings.maxSplitSize;
  if (!Number.isFinite(maxSplit)) return false;
  const index = a.free[pool]![stream];
  if (index === undefined) return false;
  const bl = a.blocks;
  const key = Math.max(size, maxSplit);
  let i = index.lowerBound(key, 0);
  if (i < index.count && !isExpandable(a, index.id(i)) && !bl.isSplit(index.id(i))) {
    releaseBlock(a, index.id(i));
    return true;
  }
  let total = 0;
  for (i = Math.min(i, index.count) - 1; i >= 0 && total < key; i--) {
    const b = index.id(i);
    if (bl.size[b]! < maxSplit) break;
    // Oversize blocks are whole segments (never split); expandable ones are skipped (2.5+).
    if (isExpandable(a, b) || bl.isSplit(b)) continue;
    total += bl.size[b]!;
    releaseBlock(a, b);
  }
  return total >= key;
}

/**
 * `garbage_collect_cached_blocks`: above `threshold × allowed memory`, cudaFree the unsplit free
 * blocks of the default large pool whose age (get_free_block calls since they were freed) is at
 * least the average, oldest rounds first, until reserved memory is back under the threshold.
 */
export function collectGarbage(a: SimAllocator): void {
  const threshold = a.settings.gcThreshold * a.limit;
  if (a.stats.reserved <= threshold) return;
  const target = a.stats.reserved - threshold;
  const bl = a.blocks;
  const clock = a.freeCalls[0]!;
  let candidates = freeBlocksOf(a, 0).filter((b) => !bl.isSplit(b) && !isExpandable(a, b));
  let totalAge = 0;
  for (const b of candidates) totalAge += clock - bl.gcBase[b]!;
  let reclaimed = 0;
  while (reclaimed < target && candidates.length > 0) {
    const average = totalAge / candidates.length;
    const keep: number[] = [];
    for (const b of candidates) {
      const age = clock - bl.gcBase[b]!;
      if (age < average) {
        keep.push(b);
        continue;
      }
      reclaimed += bl.size[b]!;
      totalAge -= age;
      releaseBlock(a, b);
    }
    if (keep.length === candidates.length) break;
    candidates = keep;
  }
}
