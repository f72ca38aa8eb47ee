/** Synthetic PyTorch CUDA memory snapshots with known ground truth. */
export type { DeviceFigures, ExpectedFigures, PoolFigures } from './figures.js';
export {
  computeExpected,
  generateSnapshotBytes,
  generateSnapshotJson,
  type Sink,
  type WriteOptions,
  type WriteResult,
  writeSnapshot,
} from './generate.js';
export type { ResolvedOptions, SynthOptions } from './options.js';
