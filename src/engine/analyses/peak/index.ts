/** The front door of analyses/peak/: what code outside the engine may use of it. */

export type { DevicePeak, PeakOptions } from './peak.js';
export { peakOf } from './peak.js';
