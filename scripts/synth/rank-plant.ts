/**
 * What makes one rank differ from another: a buffer of known size allocated at start-up from a
 * known line of the training script and kept to the end (an extra embedding shard, a
 * rank-specific communication buffer). A multiple of 2 MiB from 10 MiB up gets a segment of its
 * own, exactly its size, so the rest of the run is the same as without it, only shifted in
 * address: two files that differ only by this option differ only by this allocation.
 */
import type { Allocator } from './allocator.js';
import type { CallSites } from './callsites.js';

export interface ExtraBufferFacts {
  bytes: number;
  /** The frame of the training script that allocates it. */
  site: { filename: string; line: number; name: string };
}

const SITE_NAME = 'allocate_rank_buffer';

/** Allocates the buffer on stream 0; returns what a comparison with a run without it must name. */
export function plantExtraBuffer(a: Allocator, sites: CallSites, bytes: number): ExtraBufferFacts {
  const stack = sites.alloc('rank_buffer', 'empty');
  a.malloc(bytes, 0, 0, stack);
  const [name, filename, line] = stack.specs.find((f) => f[0] === SITE_NAME)!;
  return { bytes, site: { filename, line, name } };
}
