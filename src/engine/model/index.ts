/** The engine's model layer's front door: what code outside the engine may use of it. */
export { lowerBound } from './lower-bound.js';
export { deviceName, type Producer, type ProducerKind } from './producer.js';
export type { DeviceModel, Snapshot } from './snapshot.js';
export type { Frame } from './stack-table.js';
export { Action, KNOWN_ACTIONS } from './trace-columns.js';
