/** The engine's derived layer's front door: what code outside the engine may use of it. */

export type { AllocationDetails, DetailFrame } from './allocation/allocation-details.js';
export { allocationDetails } from './allocation/allocation-details.js';
export { parseAddress, searchAllocations } from './allocation/allocation-search.js';
export { formatFrame, frameWhere, shortName, shortPath } from './frames/short-path.js';
export type { SiteGroup } from './frames/sites.js';
export type { FrameLike } from './frames/user-frames.js';
export { cellFrames, topUserFrame } from './frames/user-frames.js';
export type { IterationSummary } from './iterations/iterations.js';
export { findIterations } from './iterations/iterations.js';
export { hasHistory } from './state/has-history.js';
export { allocationAt, offsetOf } from './state/live-order.js';
