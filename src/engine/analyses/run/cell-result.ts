/**
 * What a run needs of one snapshot, computed once where the file is decoded (a worker thread)
 * and small and plain enough to cross threads by structured clone and to be cached as JSON:
 * the summary figures of each device, its live allocations by site (the diff's half), its OOMs,
 * and which devices have a history at all.
 */
import { hasHistory } from '../../derived/state/has-history.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type DiffSide, diffSide } from '../diff/diff-side.js';
import { type OomReport, oomReports } from '../oom/oom.js';
import { type DeviceSummary, summarize } from '../summary/summary.js';
import { type TraceHead, traceHead } from './trace-head.js';

export interface CellResult {
  devices: DeviceSummary[];
  side: DiffSide;
  ooms: { device: number; reports: OomReport[] }[];
  /**
   * The devices whose trace holds an entry that is not a marker (hasHistory). The summary's action
   * counts cannot say it: they count torch_npu's workspace markers under the actions they recode.
   */
  history: number[];
  /** Each device's first trace entries, where they carry times: what one process's dumps share (trace-head.ts). */
  heads: TraceHead[];
}

/** Devices a run compares: those with a trace or memory at the dump (a rank's own GPU). */
export function runDevices(s: Snapshot): DeviceModel[] {
  const used = s.devices.filter((d) => d.trace.length > 0 || d.segmentIds.length > 0);
  return used.length > 0 ? used : s.devices;
}

export function cellResult(s: Snapshot): CellResult {
  const devices = runDevices(s);
  // The sites below need the allocation table; built first, its pairing also gives the summary
  // the facts it would otherwise pair the whole trace again for (a tenth of a cell's time).
  for (const d of devices) void d.allocations;
  const summaries = summarize(s, devices).devices;
  return {
    devices: summaries,
    side: diffSide(s, devices, false, summaries),
    ooms: devices
      .map((d) => ({ device: d.device, reports: oomReports(s, d) }))
      .filter((o) => o.reports.length > 0),
    history: devices.filter(hasHistory).map((d) => d.device),
    heads: devices.flatMap((d) => traceHead(d)),
  };
}
