/** The engine's base layer's front door: what code outside the engine may use of it. */
export { asSnapshotError, SnapshotError } from './errors.js';
export { formatBytes, formatCount, formatDuration, formatStream, plural, sinceStart } from './format.js';
export { parseByteText, parseCountText, parseRangeText } from './units.js';
