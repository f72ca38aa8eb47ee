/** The front door of analyses/gc/: what code outside the engine may use of it. */
export type { BurstPattern } from './burst-patterns.js';
export type { DeviceGc, GcBurst, GcOptions } from './gc-bursts.js';
export { gcBurstsOf } from './gc-bursts.js';
export {
  burstLivedText,
  burstWhenText,
  patternCountText,
  patternEachText,
  patternPeriodText,
  patternSpanText,
} from './gc-words.js';
