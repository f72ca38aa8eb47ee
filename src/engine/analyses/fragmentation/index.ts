/** The front door of analyses/fragmentation/: what code outside the engine may use of it. */

export type { FragBlame, PinningSite } from './frag-blame.js';
export { fragmentationBlame } from './frag-blame.js';
export { nonReleasablePeakWords, SEGMENT_ALLOC_COLUMNS } from './frag-words.js';
export type { DeviceFragmentation, FragOptions, FragState } from './fragmentation.js';
export { fragmentationOf, listName } from './fragmentation.js';
