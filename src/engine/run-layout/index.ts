/** The engine's run-layout layer's front door: what code outside the engine may use of it. */

export type { LeftOut, Run, RunCell } from './discover.js';
export { discoverRun, holdsSnapshots, isSnapshotName } from './discover.js';
export { naturalCompare } from './natural-order.js';
export { notSnapshotJson } from './not-snapshot.js';
export { pickCell } from './pick-cell.js';
