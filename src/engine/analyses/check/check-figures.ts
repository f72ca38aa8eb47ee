/**
 * The figures `memlens check` guards, each read from the analyses that already compute it (the
 * summary's trace peaks, the OOM reports, leaks or a run's growth), with the place it was largest
 * and the allocating sites that account for most of it.
 */
import type { Frame } from '../../model/stack-table.js';
import type { SiteSide } from '../diff/diff-side.js';
import type { DeviceLeaks } from '../leaks/leaks.js';
import type { GrowingSite } from '../run/growth.js';
import type { DeviceSummary } from '../summary/summary.js';
import { fragAccount } from './check-fragmentation.js';
import type { BlamedSegment, BlamedSite, CheckSubject, Place } from './check-subject.js';
import { growthUnseen, historyUnseen, leaksUnseen } from './check-unjudged.js';

export const CHECK_FIGURES = [
  'peak_allocated',
  'peak_reserved',
  'fragmentation',
  'ooms',
  'leaks',
  'growth_per_step',
] as const;
export type CheckFigure = (typeof CHECK_FIGURES)[number];

export interface Measured {
  value: number;
  /** Fragmentation only: the reserved peak it is a share of. */
  of_bytes?: number;
  place: Place | null;
  sites: BlamedSite[];
  /** Against a baseline: where the site that grew most first held its bytes (appearance.ts). */
  appears?: Place | null;
  /** Fragmentation: the segments its free bytes are in, and the entry `memlens frag --at` shows. */
  segments?: BlamedSegment[];
  at_entry?: number | null;
  /**
   * Why the record cannot show the figure (check-unjudged.ts): what was found is real, but none
   * found, or fewer than a limit, is no verdict.
   */
  unseen?: string | null;
  /** An allocated peak: what it counts. */
  counts?: PeakCounts;
}

export type Figures = Record<CheckFigure, Measured>;

/**
 * What an allocated peak counts (allocatedPeak): the trace's peak of requested bytes, or the bytes
 * of the blocks allocated at the dump where those are more.
 */
export type PeakCounts = 'trace_requested' | 'dump_blocks';

/** Sites listed per figure. */
export const TOP_SITES = 3;

export function measure(subject: CheckSubject, top = TOP_SITES): Figures {
  const devices = devicesOf(subject);
  const unrecorded = historyUnseen(subject);
  const peakOf = (peak: Peak) => ({ ...peakAmong(subject, devices, peak, top), unseen: unrecorded });
  const frag = largest(devices, excess);
  return {
    peak_allocated: peakOf(allocatedPeak),
    peak_reserved: peakOf(reservedPeak),
    fragmentation: {
      ...(frag === null
        ? none()
        : {
            value: excess(frag),
            of_bytes: frag.summary.trace_peak_reserved_bytes,
            place: frag.place,
            ...fragAccount(subject, frag.place, top),
          }),
      unseen: unrecorded,
    },
    ooms: { ...ooms(subject, top), unseen: unrecorded },
    leaks: {
      ...(subject.leaks === null
        ? runLeaks(subject.report.growth, top)
        : fileLeaks(subject.leaks, subject.label, top)),
      unseen: leaksUnseen(subject),
    },
    growth_per_step: {
      ...(subject.leaks === null
        ? runGrowthPerStep(subject.report.growth, top)
        : fileGrowth(subject.leaks, subject.label, top)),
      unseen: growthUnseen(subject),
    },
  };
}

/** Reserved above allocated at the peak: the fragmentation figure of one device. */
function excess(d: DevicePlace): number {
  return d.summary.trace_peak_reserved_bytes - d.summary.trace_peak_allocated_bytes;
}

/** Where the fragmentation figure is largest: the file and device whose model explains it. */
export function fragmentationPlace(subject: CheckSubject): Place | null {
  return largest(devicesOf(subject), excess)?.place ?? null;
}

/** A device's peak figure, what it counts, and the moment whose live allocations account for it. */
type Peak = (d: DevicePlace['summary']) => { value: number; counts?: PeakCounts; moment: Moment };
type Moment = 'at_peak' | 'at_dump';

/**
 * The allocated peak as a lower bound of the allocated block bytes at their peak, as tight as the
 * file allows. PyTorch's trace records each alloc's requested size, and the dump's blocks their
 * rounded size (c10/cuda/CUDACachingAllocator.cpp @ eb42ad6eca0ce61e7c581212b4bf32f991425571, as
 * on 2026 main: `alloc_found_block` sets `block->requested_size = orig_size` and calls
 * `record_trace(TraceEntry::ALLOC, int64_t(block->ptr), orig_size, …)`, while `snapshot()` adds
 * `segment_info.allocated_size += block_info.size`, `block->size` being `round_size(orig_size)` or
 * more, which memory_stats' `allocated_bytes` counts too). The trace's peak is
 * therefore below the allocator's, and so may be the dump's own allocated bytes (an OOM dump taken
 * at its peak): the larger of the two is the figure, and says which it is.
 */
function allocatedPeak(d: DevicePlace['summary']): ReturnType<Peak> {
  return d.allocated_bytes > d.trace_peak_allocated_bytes
    ? { value: d.allocated_bytes, counts: 'dump_blocks', moment: 'at_dump' }
    : { value: d.trace_peak_allocated_bytes, counts: 'trace_requested', moment: 'at_peak' };
}

/** Reserved bytes are whole segments in the trace and the dump alike: its peak is exact. */
function reservedPeak(d: DevicePlace['summary']): ReturnType<Peak> {
  return { value: d.trace_peak_reserved_bytes, moment: 'at_peak' };
}

function peakAmong(subject: CheckSubject, devices: DevicePlace[], peak: Peak, top: number): Measured {
  const best = largest(devices, (d) => peak(d.summary).value);
  if (best === null) return none();
  const { value, counts, moment } = peak(best.summary);
  return {
    value,
    ...(counts === undefined ? {} : { counts }),
    place: best.place,
    sites: peakSites(subject, best.place, moment, top),
  };
}

/** One rank (and device) of a run: its own peaks over all its windows and dumps. */
export interface RankPeaks {
  rank: number | null;
  device: number;
  peak_allocated: Measured;
  peak_reserved: Measured;
}

/** Each rank's peaks: a run is compared rank by rank, a rank that grew may stay below another's peak. */
export function rankPeaks(subject: CheckSubject, top = TOP_SITES): RankPeaks[] {
  const byRank = new Map<string, DevicePlace[]>();
  for (const d of devicesOf(subject)) {
    const key = `${d.place.rank}:${d.place.device}`;
    byRank.set(key, [...(byRank.get(key) ?? []), d]);
  }
  return [...byRank.values()].map((list) => ({
    rank: list[0]!.place.rank,
    device: list[0]!.place.device,
    peak_allocated: peakAmong(subject, list, allocatedPeak, top),
    peak_reserved: peakAmong(subject, list, reservedPeak, top),
  }));
}

interface DevicePlace {
  place: Place;
  summary: Pick<
    DeviceSummary,
    'trace_peak_allocated_bytes' | 'trace_peak_reserved_bytes' | 'allocated_bytes'
  >;
}

function devicesOf(subject: CheckSubject): DevicePlace[] {
  return subject.report.snapshots.flatMap((s) =>
    s.devices.map((d) => ({
      place: { file: s.file, device: d.device, rank: s.rank, step: s.step },
      summary: d,
    })),
  );
}

export function largest<T>(items: T[], key: (t: T) => number): T | null {
  return items.reduce<T | null>((best, t) => (best === null || key(t) > key(best) ? t : best), null);
}

function none(): Measured {
  return { value: 0, place: null, sites: [] };
}

/** The live allocations at that device's allocated peak, or at its dump, by site (the diff's half, diff-side.ts). */
function peakSites(subject: CheckSubject, p: Place, moment: Moment, top: number): BlamedSite[] {
  const side = subject.results.get(p.file)?.side.devices.find((d) => d.device === p.device);
  return (side?.[moment].sites ?? []).slice(0, top).map(blamed);
}

export function blamed(s: Pick<SiteSide, 'bytes' | 'frames'>): BlamedSite {
  return { bytes: s.bytes, frames: plainFrames(s.frames) };
}

function plainFrames(frames: readonly Frame[]): BlamedSite['frames'] {
  return frames.map(({ filename, line, name }) => ({ filename, line, name }));
}

/**
 * Every OOM of the subject: each `oom` entry, and each OOM dump whose trace has none (the dump
 * itself says the process ran out); the first one's place and what held memory then.
 */
function ooms(subject: CheckSubject, top: number): Measured {
  const all = subject.report.ooms.flatMap((o) => {
    const step = o.after_step ?? o.in_step;
    const place = (device: number) => ({ file: o.file, device, rank: o.rank, step });
    if (o.devices.length === 0) return [{ place: place(0), sites: dumpSites(subject, o.file, top) }];
    return o.devices.flatMap((d) =>
      d.reports.map((r) => ({ place: place(d.device), sites: r.held.sites.slice(0, top).map(blamed) })),
    );
  });
  const first = all[0];
  return first === undefined ? none() : { value: all.length, ...first };
}

/** The live allocations at an OOM dump without an `oom` entry (its first device's), by site. */
function dumpSites(subject: CheckSubject, file: string, top: number): BlamedSite[] {
  const side = subject.results.get(file)?.side.devices[0];
  return (side?.at_dump.sites ?? []).slice(0, top).map(blamed);
}

/** Sites whose allocations from several iterations are still held (leaks.ts), most held first. */
function fileLeaks(leaks: DeviceLeaks[], file: string, top: number): Measured {
  const groups = leaks.flatMap((l) => l.groups.filter((g) => g.accumulating).map((g) => ({ l, g })));
  groups.sort((x, y) => y.g.held_bytes - x.g.held_bytes);
  const first = groups[0];
  return {
    value: groups.length,
    place: first === undefined ? null : { file, device: first.l.device, rank: null, step: null },
    sites: groups.slice(0, top).map(({ g }) => ({ bytes: g.held_bytes, frames: plainFrames(g.frames) })),
  };
}

/** The fitted growth of allocated memory per iteration, and the leaking sites by bytes per iteration. */
function fileGrowth(leaks: DeviceLeaks[], file: string, top: number): Measured {
  const worst = largest(leaks, (l) => l.allocated_growth_bytes_per_iteration ?? 0);
  if (worst === null || (worst.allocated_growth_bytes_per_iteration ?? 0) <= 0) return none();
  const groups = worst.groups
    .filter((g) => g.accumulating)
    .sort((x, y) => y.bytes_per_iteration - x.bytes_per_iteration);
  return {
    value: Math.round(worst.allocated_growth_bytes_per_iteration!),
    place: { file, device: worst.device, rank: null, step: null },
    sites: groups
      .slice(0, top)
      .map((g) => ({ bytes: Math.round(g.bytes_per_iteration), frames: plainFrames(g.frames) })),
  };
}

/** A run's growing sites (growth.ts), each with the bytes its ranks end with. */
function runLeaks(growth: GrowingSite[], top: number): Measured {
  const first = growth[0];
  return {
    value: growth.length,
    place: first === undefined ? null : rankPlace(first.ranks[0]!),
    sites: growth.slice(0, top).map((g) => ({
      bytes: g.ranks.reduce((n, r) => n + r.bytes.at(-1)!, 0),
      frames: plainFrames(g.frames),
    })),
  };
}

/** The rank whose growing sites gain the most per step together, and those sites. */
function runGrowthPerStep(growth: GrowingSite[], top: number): Measured {
  const perRank = new Map<string, { place: Place; total: number; sites: BlamedSite[] }>();
  for (const g of growth)
    for (const r of g.ranks) {
      const key = `${r.rank}:${r.device}`;
      const entry = perRank.get(key) ?? { place: rankPlace(r), total: 0, sites: [] };
      entry.total += r.bytes_per_step;
      entry.sites.push({ bytes: Math.round(r.bytes_per_step), frames: plainFrames(g.frames) });
      if (r.first_step < entry.place.step!) entry.place.step = r.first_step;
      perRank.set(key, entry);
    }
  const worst = largest([...perRank.values()], (e) => e.total);
  if (worst === null) return none();
  return {
    value: Math.round(worst.total),
    place: worst.place,
    sites: worst.sites.sort((x, y) => y.bytes - x.bytes).slice(0, top),
  };
}

function rankPlace(r: GrowingSite['ranks'][number]): Place {
  return { file: '', device: r.device, rank: r.rank, step: r.first_step };
}
