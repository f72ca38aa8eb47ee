/**
 * Which runs of a sweep are the same replay under another name, known before replaying.
 * `max_split_size` acts only on blocks and requests at least that large: the oversize best-fit
 * rules and the split rule compare them with it, and release_available_cached_blocks frees only
 * blocks that large. With classic segments no block outgrows its segment, so once the limit is
 * above every segment a run can hold, any two such limits make every decision alike.
 * (Expandable segments merge mapped pages into blocks as large as the mapping: never assumed.)
 */
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { deviceInputs } from './device-inputs.js';
import { allocationSize, roundSize, SMALL_BUFFER } from './rounding.js';
import type { SimSettings } from './settings.js';

/** Largest block a non-expandable run under `s` can hold: its largest possible segment. */
function largestBlock(snapshot: Snapshot, d: DeviceModel, s: SimSettings): number {
  const inputs = deviceInputs(snapshot, d);
  // round_size never decreases with the request, so the largest request makes the largest segment.
  const newSegment = allocationSize(roundSize(inputs.largestRequest, s), s);
  return Math.max(SMALL_BUFFER, s.largeSegmentSize, newSegment, inputs.largestStartRange);
}

/** The settings with the max_split_size limit (and what only it reads) set aside. */
function withoutSplitLimit(s: SimSettings): string {
  return JSON.stringify({ ...s, maxSplitSize: 0, nonSplitTolerance: 0 });
}

/**
 * For each run, the index of an earlier run it repeats exactly (-1: it must be replayed): same
 * settings but for a max_split_size above every block either run can hold.
 */
export function repeatedReplays(snapshot: Snapshot, d: DeviceModel, runs: readonly SimSettings[]): number[] {
  const keys = runs.map((s) =>
    !s.expandable && s.maxSplitSize > largestBlock(snapshot, d, s) ? withoutSplitLimit(s) : null,
  );
  return keys.map((key, i) => {
    if (key === null) return -1;
    const first = keys.indexOf(key);
    return first < i ? first : -1;
  });
}
