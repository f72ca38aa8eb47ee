/** The front door of analyses/leaks/: what code outside the engine may use of it. */
export { leakIterationsSpan, leakKind } from './leak-words.js';
export type { DeviceLeaks, LeakGroup, LeakOptions } from './leaks.js';
export { leaksOf } from './leaks.js';
export type { Unreleased } from './unreleased.js';
export { unreleasedIds, windowEntries } from './unreleased.js';
