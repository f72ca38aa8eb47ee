import type { SiteGroup } from '../../derived/frames/sites.js';
import type { Frame } from '../../model/stack-table.js';
import { type Spread, spread } from './spread.js';

/**
 * Bursts that free the same sites again and again: one collector on a schedule (every K steps,
 * or whenever a generation fills). A long run makes thousands of them; a report lists each
 * pattern once with its count, period, bytes per burst and span, and the bursts that fit no
 * pattern apart.
 */
export interface BurstPattern {
  /** Indices into DeviceGc.bursts, in trace order. */
  bursts: number[];
  count: number;
  first_entry: number;
  last_entry: number;
  first_time_us: number | null;
  last_time_us: number | null;
  /** Median distance between consecutive bursts of the pattern. */
  period_iterations: number | null;
  period_entries: number | null;
  period_us: number | null;
  /** Every gap within a quarter of the period of the median gap: a collection on a schedule. */
  regular: boolean;
  /** Per burst: bytes and allocations freed. */
  bytes: Spread;
  allocations: Spread;
  total_bytes: number;
  /** How many of its bursts free through Python's garbage collector. */
  through_gc: number;
  free_frames: Frame[];
  /** Index into DeviceGc.bursts of the burst of median bytes: the one whose sites and ages are shown. */
  typical: number;
  groups: SiteGroup[];
  other_groups: number;
}

/** What a burst contributes to grouping (GcBurst has every field but the key). */
export interface PatternInput {
  /** Freeing site and allocating sites: bursts with the same key repeat one collection. */
  key: string;
  entry: number;
  last_entry: number;
  time_us: number | null;
  iteration: number | null;
  count: number;
  bytes: number;
  through_gc: boolean;
  free_frames: Frame[];
  groups: SiteGroup[];
  other_groups: number;
}

/** A pattern repeats at least this often; fewer are listed one by one. */
const MIN_REPEATS = 3;
/** A burst freeing more than this many times (or less than its inverse) its pattern's median bytes stands apart. */
const SIZE_OUTLIER = 2;
/** Gaps may vary this much around the period and still be on a schedule. */
const PERIOD_TOLERANCE = 0.25;

export interface Grouped {
  patterns: BurstPattern[];
  /** Indices into the bursts of those in no pattern, in trace order. */
  outliers: number[];
}

export function groupBursts(bursts: PatternInput[]): Grouped {
  const byKey = new Map<string, number[]>();
  bursts.forEach((b, i) => {
    const list = byKey.get(b.key);
    if (list) list.push(i);
    else byKey.set(b.key, [i]);
  });
  const patterns: BurstPattern[] = [];
  const outliers: number[] = [];
  for (const members of byKey.values()) {
    const median = spread(members.map((i) => bursts[i]!.bytes))!.median;
    const fits = (i: number) =>
      bursts[i]!.bytes <= SIZE_OUTLIER * median && bursts[i]!.bytes * SIZE_OUTLIER >= median;
    const kept = members.filter(fits);
    if (kept.length < MIN_REPEATS) {
      outliers.push(...members);
      continue;
    }
    outliers.push(...members.filter((i) => !fits(i)));
    patterns.push(patternOf(bursts, kept));
  }
  patterns.sort((x, y) => y.total_bytes - x.total_bytes);
  return { patterns, outliers: outliers.sort((x, y) => x - y) };
}

function patternOf(bursts: PatternInput[], ids: number[]): BurstPattern {
  const of = ids.map((i) => bursts[i]!);
  const first = of[0]!;
  const last = of[of.length - 1]!;
  const byBytes = [...ids].sort((x, y) => bursts[x]!.bytes - bursts[y]!.bytes);
  const typical = byBytes[byBytes.length >> 1]!;
  const entryGaps = gaps(of.map((b) => b.entry));
  const periodEntries = spread(entryGaps)?.median ?? null;
  return {
    bursts: ids,
    count: ids.length,
    first_entry: first.entry,
    last_entry: last.last_entry,
    first_time_us: first.time_us,
    last_time_us: last.time_us,
    period_iterations: medianGap(of.map((b) => b.iteration)),
    period_entries: periodEntries,
    period_us: medianGap(of.map((b) => b.time_us)),
    regular:
      periodEntries !== null &&
      entryGaps.every((g) => Math.abs(g - periodEntries) <= PERIOD_TOLERANCE * periodEntries),
    bytes: spread(of.map((b) => b.bytes))!,
    allocations: spread(of.map((b) => b.count))!,
    total_bytes: of.reduce((n, b) => n + b.bytes, 0),
    through_gc: of.filter((b) => b.through_gc).length,
    free_frames: first.free_frames,
    typical,
    groups: bursts[typical]!.groups,
    other_groups: bursts[typical]!.other_groups,
  };
}

function gaps(values: number[]): number[] {
  return values.slice(1).map((v, k) => v - values[k]!);
}

/** Median distance between consecutive known values; null with fewer than two. */
export function medianGap(values: (number | null)[]): number | null {
  return spread(gaps(values.filter((v): v is number => v !== null)))?.median ?? null;
}
