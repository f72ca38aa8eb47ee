/**
 * `memlens simulate`: each device replayed under the recorded allocator settings and under the
 * settings asked for (or a standard sweep), with the figures side by side and, for the recorded
 * run, how faithfully it reproduces the recording.
 */
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { type CapacitySource, deviceCapacity } from './capacity.js';
import { type Fidelity, fidelityOf } from './fidelity.js';
import { type Replay, replayDevice } from './replay.js';
import { type ReplaySummary, rankReplays, summarizeReplay } from './replay-summary.js';
import { repeatedReplays } from './same-replay.js';
import {
  applyConf,
  DEFAULT_TORCH_VERSION,
  describeSettings,
  type SimSettings,
  snapshotSettings,
} from './settings.js';
import { cloneSettings, sweepSettings } from './sweep.js';

export interface SimulateOptions {
  /** Settings string applied on top of the recorded settings for the what-if run. */
  set?: string;
  capacity?: number;
  torchVersion?: string;
  sweep?: boolean;
  /** Keep every event of the run that would be written as a snapshot. */
  keepEvents?: boolean;
}

export interface DeviceSimulation {
  device: number;
  /** null: unlimited (no oom in the trace and no --capacity). */
  capacity_bytes: number | null;
  capacity_source: CapacitySource;
  /** reserved + device_free at the first oom (null: none); differs from capacity_bytes when the
   * recording reserved more before the oom ('recorded peak') or a capacity was given. */
  capacity_at_oom_bytes: number | null;
  /** With 'recorded peak': the entry after which the recording reserved that much. */
  capacity_peak_entry: number;
  trace_entries: number;
  recorded: ReplaySummary;
  what_if: ReplaySummary | null;
  /** Ranked best first (only with --sweep). */
  sweep: ReplaySummary[] | null;
  fidelity: Fidelity;
}

export interface SimulationResult {
  torch_version: string;
  devices: DeviceSimulation[];
  /** The replays a snapshot is written from: the what-if run if there is one, else the recorded one. */
  written: { device: DeviceModel; replay: Replay; settings: SimSettings }[];
}

export function simulate(s: Snapshot, devices: DeviceModel[], o: SimulateOptions): SimulationResult {
  const version = o.torchVersion ?? DEFAULT_TORCH_VERSION;
  const base = snapshotSettings(s, version);
  const whatIf = o.set !== undefined ? applyConf(cloneSettings(base), o.set) : null;
  const written: SimulationResult['written'] = [];
  const out = devices.map((d): DeviceSimulation => {
    const cap = deviceCapacity(d, o.capacity);
    const keep = o.keepEvents === true;
    const recorded = replayDevice(s, d, {
      settings: base,
      capacity: cap.bytes,
      recorded: true,
      allEvents: keep && !whatIf,
    });
    let whatIfRun: ReplaySummary | null = null;
    if (whatIf !== null) {
      const r = replayDevice(s, d, {
        settings: whatIf,
        capacity: cap.bytes,
        recorded: false,
        allEvents: keep,
      });
      whatIfRun = summarizeReplay(whatIf, r);
      written.push({ device: d, replay: r, settings: whatIf });
    } else {
      written.push({ device: d, replay: recorded, settings: base });
    }
    const recordedRun = summarizeReplay(base, recorded);
    const sweep = o.sweep ? rankReplays(sweepRuns(s, d, sweepSettings(base), cap.bytes, recordedRun)) : null;
    return {
      device: d.device,
      capacity_bytes: Number.isFinite(cap.bytes) ? cap.bytes : null,
      capacity_source: cap.source,
      capacity_at_oom_bytes: cap.at_oom_bytes,
      capacity_peak_entry: cap.peak_entry,
      trace_entries: d.trace.length,
      recorded: recordedRun,
      what_if: whatIfRun,
      sweep,
      fidelity: fidelityOf(s, d, recorded),
    };
  });
  return { torch_version: version, devices: out, written };
}

/**
 * The sweep's runs in order; a run that repeats an earlier one exactly takes its figures, and the
 * recorded settings (the plan's first run) take the recorded run's: same settings, same answer.
 */
function sweepRuns(
  s: Snapshot,
  d: DeviceModel,
  settings: SimSettings[],
  capacity: number,
  recorded: ReplaySummary,
): ReplaySummary[] {
  const repeats = repeatedReplays(s, d, settings);
  const out: ReplaySummary[] = [];
  settings.forEach((set, i) => {
    const same = i === 0 ? recorded : out[repeats[i]!];
    out.push(
      same !== undefined
        ? { ...same, settings: describeSettings(set) }
        : summarizeReplay(
            set,
            replayDevice(s, d, { settings: set, capacity, recorded: false, allEvents: false }),
          ),
    );
  });
  return out;
}
