/** The front door of analyses/summary/: what code outside the engine may use of it. */
export { deviceStreams, streamView } from './stream-view.js';
export type { DeviceFigures, DeviceSummary, PoolFigures, SnapshotSummary, SummaryRow } from './summary.js';
export { summarize } from './summary.js';
