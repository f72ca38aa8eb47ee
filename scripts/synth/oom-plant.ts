/**
 * Out-of-memory errors with a known cause, planted after the training loop, and the figures
 * memlens must find, computed from the allocator model's own free lists and counters:
 * - fragmentation: a comb of equal blocks, every other one freed, so the cached free memory
 *   covers the request but no free block of its pool and stream does;
 * - exhaustion: the device is filled, and the request exceeds free + cached memory;
 * - outside: another process takes the device's memory, so CUDA's free memory is small while
 *   PyTorch's reserved memory is far below capacity.
 */
import type { Allocator } from './allocator.js';
import { freeListOf } from './blocks.js';
import type { CallSites } from './callsites.js';
import { LARGE_BUFFER } from './sizes.js';

export type OomCause = 'fragmentation' | 'exhaustion' | 'outside';
export const OOM_CAUSES: readonly OomCause[] = ['fragmentation', 'exhaustion', 'outside'];

/** What memlens must report for the planted `oom` entry (byte figures as in its `oom` JSON). */
export interface OomFacts {
  cause: OomCause;
  verdict: 'fragmentation' | 'exhaustion' | 'outside PyTorch';
  requested_bytes: number;
  device_free_bytes: number;
  /** The device's memory: pass as --capacity to measure what was held outside PyTorch. */
  capacity_bytes: number;
  /** capacity − reserved − device free: the CUDA context, other processes. */
  outside_bytes: number;
  /** Free bytes of the default large pool, every stream. */
  cached_free_bytes: number;
  /** Largest free block of the default large pool on the request's stream (0). */
  largest_free_block: number;
}

const MiB = 2 ** 20;
const GiB = 2 ** 30;
/** Device memory left free for the request to exceed (when the workload leaves that much). */
const LEFT_FREE = 256 * MiB;
/** A stream of its own for the ballast, so that it never takes one of the planted free blocks. */
const BALLAST_STREAM = 0x5f00_0000_1a00;
/** Teeth of the comb: the request (a tooth + 2 MiB) must exceed the device's free memory. */
const MIN_TOOTH = 2 * LEFT_FREE;

/** Plants the OOM (stream 0, large pool) and returns what memlens must find. */
export function plantOom(a: Allocator, sites: CallSites, cause: OomCause): OomFacts {
  a.emptyCache(sites.emptyCache());
  let largest = largestFree(a);
  if (cause === 'fragmentation') largest = comb(a, sites, largest);
  if (cause === 'outside') takenByOtherProcess(a);
  else ballast(a, sites);
  const free = a.limit - a.reserved;
  const cached = cachedFree(a);
  const requested = cause === 'fragmentation' ? largest + 2 * MiB : roundUp(free + cached + GiB, 2 * MiB);
  a.failAllocation(requested - free, 0, sites.alloc('lm_head', 'mm'));
  if (a.limit - a.reserved !== free) throw new Error('the OOM flush released memory the plant counted on');
  return {
    cause,
    verdict: cause === 'outside' ? 'outside PyTorch' : cause,
    requested_bytes: requested,
    device_free_bytes: free,
    capacity_bytes: a.config.totalMemory,
    outside_bytes: a.config.outsideMemory,
    cached_free_bytes: cached,
    largest_free_block: largest,
  };
}

/**
 * Blocks of G bytes (G above every free block, so only the new segment can serve them) cut from
 * one segment of 5·G; the 2nd and 4th are freed between live neighbours and stay apart.
 */
function comb(a: Allocator, sites: CallSites, largest: number): number {
  const g = Math.max(MIN_TOOTH, roundUp(largest + 1, 2 * MiB) + 2 * MiB);
  const stack = sites.alloc('kv_cache', 'empty');
  const free = sites.free('kv_cache');
  a.free(a.malloc(5 * g, 0, 0, stack), free);
  const teeth = Array.from({ length: 5 }, () => a.malloc(g, 0, 0, stack));
  a.free(teeth[1]!, free);
  a.free(teeth[3]!, free);
  return g;
}

/**
 * Fills the device down to LEFT_FREE with one tensor in a segment of its own (whole 20 MiB
 * pages, so that an expandable segment keeps no free page for the OOM's flush to unmap).
 */
function ballast(a: Allocator, sites: CallSites): void {
  const bytes = roundDown(a.limit - a.reserved - LEFT_FREE, LARGE_BUFFER);
  if (bytes > 0) a.malloc(bytes, BALLAST_STREAM, 0, sites.alloc('kv_cache', 'empty'));
}

/** Another process allocates all but LEFT_FREE of what PyTorch has not reserved. */
function takenByOtherProcess(a: Allocator): void {
  const taken = roundDown(a.limit - a.reserved - LEFT_FREE, 2 * MiB);
  // The request exceeds free + cached by 1 GiB; it must fit without the other process, and the
  // memory outside PyTorch must be notable (memlens names it from 2 GiB).
  if (taken < cachedFree(a) + 2 * GiB)
    throw new RangeError(
      'the workload leaves too little device memory to plant an OOM caused outside PyTorch',
    );
  a.config.outsideMemory += taken;
}

function largeDefaultPool(a: Allocator) {
  return a.pool(0, false);
}

function largestFree(a: Allocator): number {
  const top = freeListOf(largeDefaultPool(a), 0).all().at(-1);
  return top?.size ?? 0;
}

function cachedFree(a: Allocator): number {
  let n = 0;
  for (const list of largeDefaultPool(a).free.values()) for (const b of list.all()) n += b.size;
  return n;
}

function roundUp(n: number, unit: number): number {
  return Math.ceil(n / unit) * unit;
}

function roundDown(n: number, unit: number): number {
  return Math.floor(n / unit) * unit;
}
