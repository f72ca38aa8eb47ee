/** The front door of analyses/diff/: what code outside the engine may use of it. */

export type { DeviceDiff, Matching, MomentDiff, SnapshotDiff } from './diff.js';
export { diffSides, diffSnapshots } from './diff.js';
export type { DiffSide } from './diff-side.js';
export { diffSide } from './diff-side.js';
