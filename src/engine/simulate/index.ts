/** The engine's simulate layer's front door: what code outside the engine may use of it. */
export type { Fidelity } from './fidelity.js';
export { replayDevice } from './replay.js';
export type { ReplaySummary } from './replay-summary.js';
export { howFar, rankReplays } from './replay-summary.js';
export { MIN_BLOCK, MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE } from './rounding.js';
export type { SimSettings } from './settings.js';
export {
  applyConf,
  DEFAULT_TORCH_VERSION,
  defaultSettings,
  describeSettings,
  recordedSettings,
} from './settings.js';
export type { DeviceSimulation, SimulationResult } from './simulate.js';
export { simulate } from './simulate.js';
export { cloneSettings, sweepSettings } from './sweep.js';
export { sweepPlan, sweepStep } from './sweep-steps.js';
export { simulatedSnapshot } from './to-snapshot.js';
