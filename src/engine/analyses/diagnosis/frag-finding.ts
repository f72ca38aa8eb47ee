import { formatBytes, formatCount, plural } from '../../base/format.js';
import { estimatedFreeState } from '../../derived/state/free-blocks.js';
import { hasHistory } from '../../derived/state/has-history.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type SegmentAllocMoment, segmentAllocMoments } from '../fragmentation/fragmentation.js';
import type { Finding, Outcome } from './finding.js';

/** Reserved above allocated matters from this share of the reserved peak (rounding stays below it). */
const MIN_RESERVED_SHARE = 0.05;

/**
 * Fragmentation that cost memory: the device had to hold more than the tensors ever needed
 * (reserved peaked well above the allocated peak), and the fragmentation analysis saw new
 * segments (cudaMalloc) made while the request's own free list held enough free bytes for it,
 * but no block large enough. Either alone is no finding: caching without gaps costs nothing at
 * the peak, and gaps that later allocations fill cost nothing either.
 */
export function fragFinding(s: Snapshot, d: DeviceModel, file: string): Outcome {
  if (!hasHistory(d)) return { findings: [], clear: null };
  const { peak } = d.totals;
  const excess = peak.reserved - peak.allocated;
  const fb = formatBytes;
  if (excess < MIN_RESERVED_SHARE * peak.reserved)
    return {
      findings: [],
      clear: `no fragmentation that cost memory (reserved peaked ${fb(excess)} above allocated)`,
    };
  const costly = segmentAllocMoments(s, d).filter(isFragmented);
  if (costly.length === 0)
    return {
      findings: [],
      clear: 'no fragmentation that cost memory (no segment was made for want of a large enough free block)',
    };
  const worst = costly.reduce((x, y) => (y.segment_bytes > x.segment_bytes ? y : x));
  const free = worst.detail!;
  const finding: Finding = {
    kind: 'fragmentation',
    headline: `Fragmentation cost up to ${fb(excess)}: ${plural(costly.length, 'new segment')} ${costly.length === 1 ? 'was' : 'were'} made while enough memory sat free in blocks too small for the request.`,
    evidence: [
      `reserved memory peaked at ${fb(peak.reserved)} while allocated memory never passed ${fb(peak.allocated)}: ${fb(peak.reserved)} − ${fb(peak.allocated)} = ${fb(excess)}`,
      `largest: entry ${formatCount(worst.entry)} made a ${fb(worst.segment_bytes)} segment for a ${fb(worst.request_bytes!)} request while ${fb(free.same_list_free_bytes)} sat free in ${plural(free.same_list_free_blocks, 'block')} of its pool and stream, the largest ${fb(free.same_list_largest_free_block)}`,
      'reserved − allocated also counts rounding and memory cached for other pools and streams: the cost is at most the excess',
      'expandable_segments:True lets segments grow in place instead; memlens simulate tests it',
    ],
    frames: [],
    figures: {
      excess_bytes: excess,
      peak_reserved_bytes: peak.reserved,
      peak_allocated_bytes: peak.allocated,
      fragmented_segment_allocs: costly.length,
      worst_entry: worst.entry,
    },
    command: `memlens frag ${file} --at ${formatCount(worst.entry - 1)}`,
    show: { view: 'pool', entry: worst.entry - 1, segment: worstSegment(s, d, worst) },
    severity: 'cost',
    stake_bytes: excess,
  };
  return { findings: [finding], clear: null };
}

/** The free list had the bytes but not the block: the segment exists only because of the gaps. */
function isFragmented(m: SegmentAllocMoment): boolean {
  const f = m.detail;
  return (
    f !== null &&
    m.request_bytes !== null &&
    f.same_list_free_bytes >= m.request_bytes &&
    f.same_list_largest_free_block < m.request_bytes
  );
}

/** The segment of the request's pool and stream with the most free bytes in gaps just before. */
function worstSegment(s: Snapshot, d: DeviceModel, m: SegmentAllocMoment): number {
  const segs = estimatedFreeState(s, d, m.entry - 1).segments.filter(
    (g) => g.pool === m.pool && g.stream === m.stream && g.private_pool === null,
  );
  const [first, ...rest] = segs;
  return rest.reduce((x, y) => (y.gap_bytes > x.gap_bytes ? y : x), first ?? { address: 0, gap_bytes: 0 })
    .address;
}
