/**
 * Which cells of a run stand out: a rank holding more than the other ranks of its step (an extra
 * buffer, an uneven shard), and a window whose allocated memory jumped above its rank's previous
 * window (a buffer allocated and kept). A steady trend is growth (growth.ts), not an outlier.
 *
 * Only departures upwards count: a rank below its peers does not explain an OOM. Peaks are
 * compared across ranks only: from one step to the next they follow the batch (sequence
 * lengths), so a window's peak against its own rank's other windows flags noise.
 */
import type { StepWindow } from '../../run/discover.js';
import { diffSides, type SiteDiff } from '../diff/diff.js';
import type { CellResult } from './cell-result.js';
import { median, scaledMad, standOutThreshold } from './robust.js';
import {
  RUN_FIGURES,
  type RunFigure,
  type RunRow,
  stepLabel,
  WINDOW_FIGURES,
  windowRows,
} from './run-table.js';

export interface FigureDeparture {
  figure: RunFigure;
  value: number;
  /** ranks: the step's median; steps: the previous window's value plus the rank's usual change. */
  expected: number;
  delta: number;
}

export interface Outlier {
  axis: 'ranks' | 'steps';
  rank: number;
  device: number;
  /** The windows the finding holds for (consecutive windows with the same departures). */
  steps: StepWindow;
  /** At the first window of `steps`. */
  figures: FigureDeparture[];
  /** ranks: the rank nearest the median, compared with by site; null on the steps axis. */
  against_rank: number | null;
  /** Sites whose live bytes differ most from `against_rank` (at the dump, or at the peak when only peaks depart). */
  blame: SiteDiff[];
}

const FIGURES = Object.keys(RUN_FIGURES) as RunFigure[];
const MiB = 2 ** 20;

/**
 * The least departure that counts, per figure. What tensors hold at a dump (allocated) is the
 * same on every data-parallel rank but for real differences; peaks follow each rank's batch; the
 * cache (reserved, non-releasable) depends on each rank's history of requests, so two healthy
 * ranks can differ by a fraction of it.
 */
const FLOORS: Record<RunFigure, { share: number; bytes: number }> = {
  allocated: { share: 0.05, bytes: 64 * MiB },
  peak_allocated: { share: 0.25, bytes: 1024 * MiB },
  peak_reserved: { share: 0.25, bytes: 1024 * MiB },
  reserved: { share: 0.15, bytes: 1024 * MiB },
  non_releasable: { share: 1, bytes: 2048 * MiB },
};

export function runOutliers(rows: RunRow[], results: Map<string, CellResult>): Outlier[] {
  const windows = windowRows(rows);
  return [...acrossRanks(windows, results), ...acrossSteps(windows)];
}

type Flag = { row: RunRow; departures: FigureDeparture[]; against: RunRow | null };

function acrossRanks(rows: RunRow[], results: Map<string, CellResult>): Outlier[] {
  const flags: Flag[] = [];
  for (const step of groupBy(rows, (r) => stepLabel(r.steps)).values()) {
    if (step.length < 3) continue;
    const departures = new Map<RunRow, FigureDeparture[]>();
    for (const figure of FIGURES) {
      const present = step.filter((r) => r.figures[figure] !== null);
      if (present.length < 3) continue;
      const values = present.map((r) => r.figures[figure]!);
      const center = median(values);
      const limit = standOutThreshold(values, FLOORS[figure], center);
      for (const r of present) {
        const delta = r.figures[figure]! - center;
        if (delta > limit)
          departures.set(r, [
            ...(departures.get(r) ?? []),
            { figure, value: r.figures[figure]!, expected: center, delta },
          ]);
      }
    }
    for (const [row, deps] of departures)
      flags.push({ row, departures: deps, against: nearestMedian(step, deps[0]!) });
  }
  return merge(flags, 'ranks', rows).map((m) => withBlame(m, results));
}

/** The rank whose figure is nearest the step's median: the one a departing rank is compared with. */
function nearestMedian(step: RunRow[], d: FigureDeparture): RunRow | null {
  let best: RunRow | null = null;
  for (const r of step) {
    const v = r.figures[d.figure];
    if (v === null) continue;
    if (best === null || Math.abs(v - d.expected) < Math.abs(best.figures[d.figure]! - d.expected)) best = r;
  }
  return best;
}

function withBlame({ outlier, first }: Merged, results: Map<string, CellResult>): Outlier {
  const against = first.against;
  const a = against ? results.get(against.file) : undefined;
  const b = results.get(first.row.file);
  if (!against || !a || !b) return outlier;
  const pick = (r: RunRow, res: CellResult) => ({
    devices: res.side.devices.filter((d) => d.device === r.device),
  });
  const diff = diffSides(pick(against, a), pick(first.row, b), 3).devices[0];
  const atPeak = outlier.figures.every((f) => WINDOW_FIGURES.includes(f.figure));
  return {
    ...outlier,
    against_rank: against.rank,
    blame: diff ? (atPeak ? diff.at_peak : diff.at_dump).sites : [],
  };
}

/** Per rank, in step order: windows whose allocated memory at the dump rose by more than usual. */
function acrossSteps(rows: RunRow[]): Outlier[] {
  const flags: Flag[] = [];
  for (const mine of groupBy(rows, (r) => `${r.rank}:${r.device}`).values()) {
    if (mine.length < 3) continue;
    mine.sort((a, b) => a.steps!.first - b.steps!.first);
    const v = mine.map((r) => r.figures.allocated!);
    for (const { i, expected } of jumps(v))
      flags.push({
        row: mine[i]!,
        departures: [{ figure: 'allocated', value: v[i]!, expected, delta: v[i]! - expected }],
        against: null,
      });
  }
  return merge(flags, 'steps', rows).map((m) => m.outlier);
}

/**
 * Windows whose rise from the previous window exceeds the rank's usual change by five robust
 * deviations (and 5 % of its memory, and 64 MiB): a leak's steady rise is the usual change.
 */
function jumps(v: number[]): { i: number; expected: number }[] {
  const diffs = v.slice(1).map((x, i) => x - v[i]!);
  const usual = median(diffs);
  const floor = FLOORS.allocated;
  const limit = Math.max(5 * scaledMad(diffs, usual), floor.share * Math.abs(median(v)), floor.bytes);
  return diffs.flatMap((d, k) => (d - usual > limit ? [{ i: k + 1, expected: v[k]! + usual }] : []));
}

/** A finding being merged, with the flag of its first window (for the site comparison). */
type Merged = { outlier: Outlier; first: Flag };

/**
 * Consecutive windows of a rank with the same departing figures (same signs) become one finding
 * on the ranks axis; on the steps axis each jump or spike is its own.
 */
function merge(flags: Flag[], axis: Outlier['axis'], rows: RunRow[]): Merged[] {
  const position = rankPositions(rows);
  const out: Merged[] = [];
  const sorted = [...flags].sort(
    (a, b) =>
      a.row.rank - b.row.rank || a.row.device - b.row.device || a.row.steps!.first - b.row.steps!.first,
  );
  const signature = (f: Flag) => f.departures.map((d) => `${d.figure}${Math.sign(d.delta)}`).join(',');
  let prev: Flag | null = null;
  for (const f of sorted) {
    const last = out.at(-1);
    const continues =
      axis === 'ranks' &&
      last !== undefined &&
      prev !== null &&
      prev.row.rank === f.row.rank &&
      prev.row.device === f.row.device &&
      signature(prev) === signature(f) &&
      position.get(f.row) === position.get(prev.row)! + 1;
    if (continues) last.outlier.steps.last = f.row.steps!.last;
    else
      out.push({
        first: f,
        outlier: {
          axis,
          rank: f.row.rank,
          device: f.row.device,
          steps: { first: f.row.steps!.first, last: f.row.steps!.last },
          figures: f.departures,
          against_rank: null,
          blame: [],
        },
      });
    prev = f;
  }
  return out;
}

/** Each window's index among its rank's windows, in step order. */
function rankPositions(rows: RunRow[]): Map<RunRow, number> {
  const position = new Map<RunRow, number>();
  for (const mine of groupBy(rows, (r) => `${r.rank}:${r.device}`).values())
    for (const [i, r] of mine.sort((a, b) => a.steps!.first - b.steps!.first).entries()) position.set(r, i);
  return position;
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) m.set(key(it), [...(m.get(key(it)) ?? []), it]);
  return m;
}
