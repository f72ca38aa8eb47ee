import { formatBytes, formatCount, formatDuration } from '../../base/format.js';
import type { CurvePoint } from './fragmentation.js';

/** Columns of the segment_alloc table, the same in the CLI and the web panel. */
export const SEGMENT_ALLOC_COLUMNS = [
  'entry',
  'new segment',
  'for request',
  'reserved before',
  'unallocated before',
  'non-releasable before',
  'free in its list (largest)',
];

/**
 * The sentence for when non-releasable memory peaked, the same in the CLI and the web panel.
 * `t0`: time_us of the first trace entry (null when the trace has no times).
 */
export function nonReleasablePeakWords(p: CurvePoint, t0: number | null): string {
  const when = p.time_us === null || t0 === null ? '' : ` (${formatDuration(p.time_us - t0)} into the trace)`;
  return `non-releasable (inactive split) memory peaked at ${formatBytes(p.inactive_split_bytes)} ${p.after_entry < 0 ? 'before the first entry' : `after entry ${formatCount(p.after_entry)}`}${when}: reserved ${formatBytes(p.reserved_bytes)}, allocated ${formatBytes(p.allocated_bytes)}, ${formatBytes(p.releasable_bytes)} releasable by empty_cache(). Estimated from the trace, like the segment_alloc details.`;
}
