/** The engine's load layer's front door: what code outside the engine may use of it. */
export { loadSnapshot, loadSnapshotBytes } from './load.js';
