import { formatBytes, formatCount, plural } from '../../base/format.js';
import { formatFrame } from '../../derived/frames/short-path.js';
import { topUserFrame } from '../../derived/frames/user-frames.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { Frame } from '../../model/stack-table.js';
import { type DeviceSide, type DiffSide, diffSide, FIGURES, type MomentSide } from './diff-side.js';

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

/**
 * How a site of A was paired with a site of B: by the same frames (the user's frames, or whole
 * stacks with fullStacks); by the innermost user frame alone (function, file name, line) when
 * the frames differ (other checkout paths, another library version between the ranks); or not.
 */
export type Matching = 'same_frames' | 'innermost_user_frame' | 'only_a' | 'only_b';

/** Live bytes of one allocating site in both files, B − A. */
export interface SiteDiff {
  a_bytes: number;
  b_bytes: number;
  delta_bytes: number;
  a_count: number;
  b_count: number;
  matched_by: Matching;
  /** Innermost first; the frames in the user's own code unless full stacks (A's when A has it). */
  frames: Frame[];
  /** B's frames of a site matched by its innermost user frame (they differ from A's). */
  b_frames?: Frame[];
}

/** The live allocations of both files at one moment (each file's own), by site. */
export interface MomentDiff {
  a_after_entry: number;
  b_after_entry: number;
  a_bytes: number;
  b_bytes: number;
  delta_bytes: number;
  /** How many sites (listed or not) each matching paired. */
  matching: Record<Matching, number>;
  /** Sites whose live bytes differ, largest difference first (|B − A|). */
  sites: SiteDiff[];
  other_sites: number;
  other_delta_bytes: number;
}

export interface DeviceDiff {
  /** The device of A and of B (a rank's file often has only its own device). */
  device: number;
  device_b: number;
  /** Their names (`cuda:N`, `npu:N`). */
  label: string;
  label_b: string;
  totals: FigureDiff[];
  at_dump: MomentDiff;
  at_peak: MomentDiff;
  explanation: string[];
}

export interface SnapshotDiff {
  devices: DeviceDiff[];
  /** Devices only one of the files has. */
  unmatched: { a: DeviceName[]; b: DeviceName[] };
}

export interface DeviceName {
  device: number;
  label: string;
}

/**
 * Two snapshots (two steps, two ranks) side by side: summary figures, each file's allocated
 * peak, and the live allocations at dump and at each peak matched by allocating site, so that
 * "why does rank 3 hold more" is answered with code.
 */
export function diffSnapshots(
  a: Snapshot,
  b: Snapshot,
  aDevices: DeviceModel[],
  bDevices: DeviceModel[],
  opts: DiffOptions = {},
): SnapshotDiff {
  const full = opts.fullStacks ?? false;
  return diffSides(diffSide(a, aDevices, full), diffSide(b, bDevices, full), opts.top ?? 10);
}

/**
 * The comparison of two files' halves (see diff-side.ts). Devices pair by index, or, when each
 * file has a single device (one rank per process), with each other.
 */
export function diffSides(a: DiffSide, b: DiffSide, top = 10): SnapshotDiff {
  const pairs: [DeviceSide, DeviceSide][] = [];
  if (a.devices.length === 1 && b.devices.length === 1) pairs.push([a.devices[0]!, b.devices[0]!]);
  else
    for (const d of a.devices) {
      const e = b.devices.find((x) => x.device === d.device);
      if (e !== undefined) pairs.push([d, e]);
    }
  const unpaired = (list: DeviceSide[], side: 0 | 1) =>
    list.filter((d) => !pairs.some((p) => p[side] === d)).map((d) => ({ device: d.device, label: d.label }));
  return {
    devices: pairs.map(([da, db]) => diffDevice(da, db, top)),
    unmatched: { a: unpaired(a.devices, 0), b: unpaired(b.devices, 1) },
  };
}

function diffDevice(da: DeviceSide, db: DeviceSide, top: number): DeviceDiff {
  const totals = FIGURES.map(([metric, unit]) => {
    const x = da.figures[metric]!;
    const y = db.figures[metric]!;
    return { metric, unit, a: x, b: y, delta: y - x };
  });
  const atDump = diffMoment(da.at_dump, db.at_dump, top);
  const atPeak = diffMoment(da.at_peak, db.at_peak, top);
  return {
    device: da.device,
    device_b: db.device,
    label: da.label,
    label_b: db.label,
    totals,
    at_dump: atDump,
    at_peak: atPeak,
    explanation: [...explain('at dump time', atDump), ...explain("at each file's allocated peak", atPeak)],
  };
}

/** Two moments' live allocations (each file's own), paired by site: also what `check --baseline` blames. */
export function diffMoment(a: MomentSide, b: MomentSide, top: number): MomentDiff {
  const all = matchSites(a, b);
  const matching: Record<Matching, number> = {
    same_frames: 0,
    innermost_user_frame: 0,
    only_a: 0,
    only_b: 0,
  };
  for (const s of all) matching[s.matched_by]++;
  const differing = all
    .filter((s) => s.delta_bytes !== 0 || s.a_count !== s.b_count)
    .sort((x, y) => Math.abs(y.delta_bytes) - Math.abs(x.delta_bytes) || y.b_count - x.b_count);
  const rest = differing.slice(top);
  const sum = (k: 'a_bytes' | 'b_bytes') => all.reduce((n, s) => n + s[k], 0);
  return {
    a_after_entry: a.after_entry,
    b_after_entry: b.after_entry,
    a_bytes: sum('a_bytes'),
    b_bytes: sum('b_bytes'),
    delta_bytes: sum('b_bytes') - sum('a_bytes'),
    matching,
    sites: differing.slice(0, top),
    other_sites: rest.length,
    other_delta_bytes: rest.reduce((n, s) => n + s.delta_bytes, 0),
  };
}

/**
 * Every site of either file, paired: first by the same frames (stack ids are per file, so by
 * the frames' text); what is left on one side only is then paired by its innermost user frame.
 */
function matchSites(a: MomentSide, b: MomentSide): SiteDiff[] {
  const byFrames = new Map<string, SiteDiff>();
  for (const [side, key] of [
    [a, 'a'],
    [b, 'b'],
  ] as const) {
    for (const g of side.sites) {
      const k = framesKey(g.frames);
      let s = byFrames.get(k);
      if (s === undefined) {
        s = { ...emptySite(g.frames), matched_by: key === 'a' ? 'only_a' : 'only_b' };
        byFrames.set(k, s);
      } else if (key === 'b' && s.a_count > 0) s.matched_by = 'same_frames';
      s[`${key}_bytes`] += g.bytes;
      s[`${key}_count`] += g.count;
    }
  }
  const sites = [...byFrames.values()];
  const paired = [...sites.filter((s) => s.matched_by === 'same_frames'), ...pairByUserFrame(sites)];
  for (const s of paired) s.delta_bytes = s.b_bytes - s.a_bytes;
  return paired;
}

/** Sites on one side only, merged by innermost user frame where both sides have that frame. */
function pairByUserFrame(sites: SiteDiff[]): SiteDiff[] {
  const groups = new Map<string, { a: SiteDiff[]; b: SiteDiff[] }>();
  const out: SiteDiff[] = [];
  for (const s of sites) {
    if (s.matched_by === 'same_frames') continue;
    const k = userSiteKey(s.frames);
    if (k === undefined) {
      out.push(s);
      continue;
    }
    let g = groups.get(k);
    if (g === undefined) groups.set(k, (g = { a: [], b: [] }));
    g[s.matched_by === 'only_a' ? 'a' : 'b'].push(s);
  }
  for (const g of groups.values()) {
    if (g.a.length === 0 || g.b.length === 0) {
      // A loop, not push(...sites): a spread call overflows the stack on very many sites.
      for (const s of [g.a, g.b].flat()) out.push(s);
      continue;
    }
    const largest = (list: SiteDiff[], k: 'a_bytes' | 'b_bytes') =>
      list.reduce((x, y) => (y[k] > x[k] ? y : x));
    const merged: SiteDiff = {
      ...emptySite(largest(g.a, 'a_bytes').frames),
      matched_by: 'innermost_user_frame',
      b_frames: largest(g.b, 'b_bytes').frames,
    };
    for (const s of [...g.a, ...g.b]) {
      merged.a_bytes += s.a_bytes;
      merged.a_count += s.a_count;
      merged.b_bytes += s.b_bytes;
      merged.b_count += s.b_count;
    }
    out.push(merged);
  }
  return out;
}

function emptySite(frames: Frame[]): Omit<SiteDiff, 'matched_by'> {
  return { a_bytes: 0, b_bytes: 0, delta_bytes: 0, a_count: 0, b_count: 0, frames };
}

function framesKey(frames: Frame[]): string {
  return frames.map((f) => `${f.filename}:${f.line}:${f.name}`).join('\n');
}

/**
 * The innermost frame of the user's code as function, file name and line: the directory is left
 * out, as two ranks may run the same script from different checkouts. undefined without a stack.
 */
function userSiteKey(frames: Frame[]): string | undefined {
  const f = topUserFrame(frames);
  if (f === undefined) return undefined;
  return `${f.name}\n${f.filename.split(/[\\/]/).pop()}:${f.line}`;
}

function explain(when: string, m: MomentDiff): string[] {
  if (m.sites.length === 0) return [`${when}: the same live allocations, site by site.`];
  const more = m.delta_bytes >= 0 ? 'B holds' : 'A holds';
  const lines = [`${when}: ${more} ${formatBytes(Math.abs(m.delta_bytes))} more in live allocations.`];
  const first = m.sites[0]!;
  // The user's frame even when sites are whole stacks, whose first frame is the recorder's.
  const top = topUserFrame(first.frames);
  const where = top ? formatFrame(top) : 'allocations without a recorded stack';
  lines.push(
    `  the largest difference: ${formatBytes(Math.abs(first.delta_bytes))} ${first.delta_bytes >= 0 ? 'more in B' : 'more in A'} from ${where} (${plural(first.a_count, 'allocation')} in A, ${formatCount(first.b_count)} in B).`,
  );
  if (m.matching.innermost_user_frame > 0) {
    lines.push(
      `  ${m.matching.innermost_user_frame} site(s) matched by their innermost user frame only: their stacks differ between the files.`,
    );
  }
  return lines;
}
