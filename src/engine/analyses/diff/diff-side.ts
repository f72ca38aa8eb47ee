import { groupBySite, Sites } from '../../derived/frames/sites.js';
import { deviceName } from '../../model/producer.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { Frame } from '../../model/stack-table.js';
import { liveAllocated } from '../peak/peak.js';
import { type DeviceFigures, summarize } from '../summary/summary.js';

/**
 * One file's half of a diff: what comparing it with another file needs, and nothing of the model.
 * It is small and plain (numbers, strings, frames), so a worker thread that decoded the file can
 * hand it back by structured clone, and two files decode on two cores.
 */
export interface DiffSide {
  devices: DeviceSide[];
}

export interface DeviceSide {
  device: number;
  /** The device's name (deviceName: `cuda:N`, `npu:N`). */
  label: string;
  /** The summary figures a diff compares (FIGURES), by name. */
  figures: Record<string, number>;
  at_dump: MomentSide;
  at_peak: MomentSide;
}

/** The live allocations after one entry, by site (every site, largest first). */
export interface MomentSide {
  after_entry: number;
  sites: SiteSide[];
}

export interface SiteSide {
  bytes: number;
  count: number;
  /** Innermost first: the frames in the user's own code, or whole stacks with fullStacks. */
  frames: Frame[];
}

/** The summary figures a diff compares, and what they count. */
export const FIGURES: [keyof DeviceFigures, 'bytes' | 'count'][] = [
  ['reserved_bytes', 'bytes'],
  ['allocated_bytes', 'bytes'],
  ['active_bytes', 'bytes'],
  ['requested_bytes', 'bytes'],
  ['inactive_split_bytes', 'bytes'],
  ['largest_inactive_block', 'bytes'],
  ['trace_peak_allocated_bytes', 'bytes'],
  ['trace_peak_reserved_bytes', 'bytes'],
  ['segments', 'count'],
  ['blocks', 'count'],
  ['trace_entries', 'count'],
  ['ooms', 'count'],
];

/** `summaries`: the devices' summaries when the caller has them already (one per device, in order). */
export function diffSide(
  s: Snapshot,
  devices: DeviceModel[],
  fullStacks: boolean,
  summaries: DeviceFigures[] = summarize(s, devices).devices,
): DiffSide {
  const sites = new Sites(s.stacks, fullStacks);
  return {
    devices: devices.map((d, i) => ({
      device: d.device,
      label: deviceName(s.producer, d.device),
      figures: figuresOf(summaries[i]!),
      at_dump: momentSide(d, d.trace.length - 1, sites),
      at_peak: momentSide(d, d.totals.peakAllocatedAt, sites),
    })),
  };
}

function momentSide(d: DeviceModel, at: number, sites: Sites): MomentSide {
  const a = d.allocations;
  return {
    after_entry: at,
    sites: groupBySite(sites, a.stack, a.size, liveAllocated(d, at)).map((g) => ({
      bytes: g.bytes,
      count: g.count,
      // Without `extra` (a decoded Python dict): a side must cross threads by structured clone.
      frames: g.frames.map(({ filename, line, name }) => ({ filename, line, name, extra: undefined })),
    })),
  };
}

function figuresOf(f: DeviceFigures): Record<string, number> {
  return Object.fromEntries(FIGURES.map(([metric]) => [metric, f[metric] as number]));
}
