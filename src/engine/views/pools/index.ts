/** The front door of views/pools/: what code outside the engine may use of it. */

export type { PoolEnvelopes, PoolGroup, PoolTimelineLod } from './pool-envelopes.js';
export {
  freePartCode,
  freePartGroup,
  groupsOnStream,
  poolEnvelopes,
  poolHitAt,
  poolOffsetOf,
  poolTimelineLod,
} from './pool-envelopes.js';
export type { PoolBlock, PoolSegment, PoolStateReport, SegmentOrder } from './pool-state.js';
export { orderSegments, poolStateAfter } from './pool-state.js';
export type { SegmentPieces } from './segment-timeline.js';
export { pieceAt, segmentPieces, segmentTimelineLod } from './segment-timeline.js';
