/**
 * `memlens simulate --sweep` one run at a time, for a caller that must stay responsive between
 * runs (the web app's worker answers other questions in between and reports progress). The runs
 * are the ones `simulate` ranks: the same settings, capacity and replay; `rankReplays` orders them.
 */
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { deviceCapacity } from './capacity.js';
import { replayDevice } from './replay.js';
import { type ReplaySummary, summarizeReplay } from './replay-summary.js';
import { DEFAULT_TORCH_VERSION, describeSettings, type SimSettings, snapshotSettings } from './settings.js';
import { sweepSettings } from './sweep.js';

export interface SweepStepOptions {
  torchVersion?: string;
  /** Bytes; undefined: from an oom entry, else unlimited (as `simulate`). */
  capacity?: number;
}

function planOf(s: Snapshot, o: SweepStepOptions): SimSettings[] {
  return sweepSettings(snapshotSettings(s, o.torchVersion ?? DEFAULT_TORCH_VERSION));
}

/** The sweep's settings in the order they run (the recorded ones first), as settings strings. */
export function sweepPlan(s: Snapshot, o: SweepStepOptions = {}): string[] {
  return planOf(s, o).map(describeSettings);
}

/** Run `index` of the sweep on one device; run 0, the recorded settings, is the recorded replay. */
export function sweepStep(
  s: Snapshot,
  d: DeviceModel,
  index: number,
  o: SweepStepOptions = {},
): ReplaySummary {
  const settings = planOf(s, o)[index];
  if (settings === undefined) throw new RangeError(`sweep has no run ${index}`);
  const capacity = deviceCapacity(d, o.capacity).bytes;
  return summarizeReplay(
    settings,
    replayDevice(s, d, { settings, capacity, recorded: index === 0, allEvents: false }),
  );
}
