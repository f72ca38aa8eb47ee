import { formatBytes } from '../format.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import type { Frame } from '../model/stack-table.js';
import { liveAllocated } from './peak.js';
import { groupBySite, Sites } from './sites.js';
import { type DeviceFigures, summarize } from './summary.js';

export interface DiffOptions {
  /** Sites to list per moment (default 10). */
  top?: number;
  /** Match whole stacks instead of the frames in the user's own code. */
  fullStacks?: boolean;
}

/** One figure of both files: B − A. */
export interface FigureDiff {
  metric: string;
  unit: 'bytes' | 'count';
  a: number;
  b: number;
  delta: number;
}

/** Live bytes of one allocating site in both files (matched by frames), B − A. */
export interface SiteDiff {
  a_bytes: number;
  b_bytes: number;
  delta_bytes: number;
  a_count: number;
  b_count: number;
  /** Innermost first; the frames in the user's own code unless full stacks. */
  frames: Frame[];
}

/** The live allocations of both files at one moment (each file's own), by site. */
export interface MomentDiff {
  a_after_entry: number;
  b_after_entry: number;
  a_bytes: number;
  b_bytes: number;
  delta_bytes: number;
  /** Sites whose live bytes differ, largest difference first (|B − A|). */
  sites: SiteDiff[];
  other_sites: number;
  other_delta_bytes: number;
}

export interface DeviceDiff {
  /** The device of A and of B (a rank's file often has only its own device). */
  device: number;
  device_b: number;
  totals: FigureDiff[];
  at_dump: MomentDiff;
  at_peak: MomentDiff;
  explanation: string[];
}

export interface SnapshotDiff {
  devices: DeviceDiff[];
  /** Devices only one of the files has. */
  unmatched: { a: number[]; b: number[] };
}

const FIGURES: [keyof DeviceFigures, FigureDiff['unit']][] = [
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

/**
 * Two snapshots (two steps, two ranks) side by side: summary figures, each file's allocated
 * peak, and the live allocations at dump and at each peak matched by allocating site, so that
 * "why does rank 3 hold more" is answered with code. Devices pair by index, or, when each file
 * has a single device (one rank per process), with each other.
 */
export function diffSnapshots(
  a: Snapshot,
  b: Snapshot,
  aDevices: DeviceModel[],
  bDevices: DeviceModel[],
  opts: DiffOptions = {},
): SnapshotDiff {
  const pairs: [DeviceModel, DeviceModel][] = [];
  if (aDevices.length === 1 && bDevices.length === 1) pairs.push([aDevices[0]!, bDevices[0]!]);
  else
    for (const d of aDevices) {
      const e = bDevices.find((x) => x.device === d.device);
      if (e !== undefined) pairs.push([d, e]);
    }
  const paired = (list: DeviceModel[], side: 0 | 1) =>
    list.filter((d) => !pairs.some((p) => p[side] === d)).map((d) => d.device);
  const sites = {
    a: new Sites(a.stacks, opts.fullStacks ?? false),
    b: new Sites(b.stacks, opts.fullStacks ?? false),
  };
  return {
    devices: pairs.map(([da, db]) => diffDevice(a, b, da, db, sites, opts.top ?? 10)),
    unmatched: { a: paired(aDevices, 0), b: paired(bDevices, 1) },
  };
}

function diffDevice(
  a: Snapshot,
  b: Snapshot,
  da: DeviceModel,
  db: DeviceModel,
  sites: { a: Sites; b: Sites },
  top: number,
): DeviceDiff {
  const fa = summarize(a, [da]).devices[0]!;
  const fb = summarize(b, [db]).devices[0]!;
  const totals = FIGURES.map(([metric, unit]) => {
    const x = fa[metric] as number;
    const y = fb[metric] as number;
    return { metric, unit, a: x, b: y, delta: y - x };
  });
  const at = (d: DeviceModel, peak: boolean) => (peak ? d.totals.peakAllocatedAt : d.trace.length - 1);
  const moment = (peak: boolean) =>
    diffMoment({ d: da, at: at(da, peak), sites: sites.a }, { d: db, at: at(db, peak), sites: sites.b }, top);
  const atDump = moment(false);
  const atPeak = moment(true);
  return {
    device: da.device,
    device_b: db.device,
    totals,
    at_dump: atDump,
    at_peak: atPeak,
    explanation: [...explain('at dump time', atDump), ...explain("at each file's allocated peak", atPeak)],
  };
}

interface Side {
  d: DeviceModel;
  at: number;
  sites: Sites;
}

function diffMoment(a: Side, b: Side, top: number): MomentDiff {
  const bySite = new Map<string, SiteDiff>();
  const add = (side: Side, key: 'a' | 'b') => {
    const al = side.d.allocations;
    for (const g of groupBySite(side.sites, al.stack, al.size, liveAllocated(side.d, side.at))) {
      const k = siteKey(g.frames);
      let s = bySite.get(k);
      if (s === undefined) {
        s = { a_bytes: 0, b_bytes: 0, delta_bytes: 0, a_count: 0, b_count: 0, frames: g.frames };
        bySite.set(k, s);
      }
      s[`${key}_bytes`] += g.bytes;
      s[`${key}_count`] += g.count;
    }
  };
  add(a, 'a');
  add(b, 'b');
  const all = [...bySite.values()];
  for (const s of all) s.delta_bytes = s.b_bytes - s.a_bytes;
  const differing = all
    .filter((s) => s.delta_bytes !== 0 || s.a_count !== s.b_count)
    .sort((x, y) => Math.abs(y.delta_bytes) - Math.abs(x.delta_bytes) || y.b_count - x.b_count);
  const rest = differing.slice(top);
  const sum = (k: 'a_bytes' | 'b_bytes') => all.reduce((n, s) => n + s[k], 0);
  return {
    a_after_entry: a.at,
    b_after_entry: b.at,
    a_bytes: sum('a_bytes'),
    b_bytes: sum('b_bytes'),
    delta_bytes: sum('b_bytes') - sum('a_bytes'),
    sites: differing.slice(0, top),
    other_sites: rest.length,
    other_delta_bytes: rest.reduce((n, s) => n + s.delta_bytes, 0),
  };
}

/** Sites of two files match by their frames' text: stack ids are per file. */
function siteKey(frames: Frame[]): string {
  return frames.map((f) => `${f.filename}:${f.line}:${f.name}`).join('\n');
}

function explain(when: string, m: MomentDiff): string[] {
  if (m.sites.length === 0) return [`${when}: the same live allocations, site by site.`];
  const more = m.delta_bytes >= 0 ? 'B holds' : 'A holds';
  const lines = [`${when}: ${more} ${formatBytes(Math.abs(m.delta_bytes))} more in live allocations.`];
  const first = m.sites[0]!;
  const where = first.frames[0]
    ? `${first.frames[0].name} (${first.frames[0].filename}:${first.frames[0].line})`
    : 'allocations without a recorded stack';
  lines.push(
    `  the largest difference: ${formatBytes(Math.abs(first.delta_bytes))} ${first.delta_bytes >= 0 ? 'more in B' : 'more in A'} from ${where} (${first.a_count} allocations in A, ${first.b_count} in B).`,
  );
  return lines;
}
