/**
 * Which cells of a run stand out: a rank holding more than the other ranks of its step (an extra
 * buffer, an uneven shard), and a window whose allocated memory jumped above its rank's previous
 * window (a buffer allocated and kept). A steady trend is growth (growth.ts), not an outlier.
 *
 * Only departures upwards count: a rank below its peers does not explain an OOM. Peaks are
 * compared across ranks only: from one step to the next they follow the batch (sequence
 * lengths), so a window's peak against its own rank's other windows flags noise.
 */
import type { StepWindow } from '../../run-layout/discover.js';
import { diffSides, type SiteDiff } from '../diff/diff.js';
import type { CellResult } from './cell-result.js';
import { median, scaledMad, standOutThreshold } from './robust.js';
import {
  laneOrder,
  RUN_FIGURES,
  type RunFigure,
  type RunRow,
  stepLabel,
  WINDOW_FIGURES,
  windowRows,
} from './run-table.js';

export interface Outlier {
  axis: 'ranks' | 'steps';
  replica: number | null;
  rank: number;
  device: number;
  /** The table's lane of the cell (run-table.ts), and how the table names it. */
  lane: string;
  lane_label: string;
  figure: RunFigure;
  /** The consecutive windows of the rank where the figure stands out. */
  steps: StepWindow;
  /** At the first of those windows: the figure, what was expected, and the difference. */
  value: number;
  /** ranks: the step's median; steps: the previous window's value plus the rank's usual change. */
  expected: number;
  delta: number;
  /** The largest difference over the windows. */
  max_delta: number;
  /** ranks: the rank nearest the median at the first window, compared with by site; null on the steps axis. */
  against_rank: number | null;
  /** How the table names the lane compared with (it may be a second dump of a rank, or a device). */
  against_lane: string | null;
  /** Sites whose live bytes differ most from `against_rank` (at the peak for a peak, else at the dump). */
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
  allocated: { share: 0.01, bytes: 64 * MiB },
  peak_allocated: { share: 0.25, bytes: 1024 * MiB },
  peak_reserved: { share: 0.25, bytes: 1024 * MiB },
  reserved: { share: 0.15, bytes: 1024 * MiB },
  non_releasable: { share: 1, bytes: 2048 * MiB },
};

export function runOutliers(rows: RunRow[], results: Map<string, CellResult>): Outlier[] {
  const windows = windowRows(rows);
  return [...acrossRanks(windows, results), ...acrossSteps(windows)];
}

/** One window where one figure stands out. */
interface Flag {
  row: RunRow;
  figure: RunFigure;
  value: number;
  expected: number;
  against: RunRow | null;
}

function acrossRanks(rows: RunRow[], results: Map<string, CellResult>): Outlier[] {
  const flags: Flag[] = [];
  for (const step of groupBy(rows, (r) => stepLabel(r.steps)).values()) {
    if (step.length < 3) continue;
    for (const figure of FIGURES) {
      const present = step.filter((r) => r.figures[figure] !== null);
      if (present.length < 3) continue;
      const values = present.map((r) => r.figures[figure]!);
      const center = median(values);
      const limit = standOutThreshold(values, FLOORS[figure], center);
      for (const r of present)
        if (r.figures[figure]! - center > limit)
          flags.push({
            row: r,
            figure,
            value: r.figures[figure]!,
            expected: center,
            against: nearest(present, figure, center),
          });
    }
  }
  return merge(flags, 'ranks', rows).map((m) => withBlame(m, results));
}

/** The row whose figure is nearest `center`: the rank a departing rank is compared with. */
function nearest(rows: RunRow[], figure: RunFigure, center: number): RunRow {
  return rows.reduce((best, r) =>
    Math.abs(r.figures[figure]! - center) < Math.abs(best.figures[figure]! - center) ? r : best,
  );
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
  const atPeak = WINDOW_FIGURES.includes(outlier.figure);
  return {
    ...outlier,
    against_rank: against.rank,
    against_lane: against.lane_label,
    blame: diff ? (atPeak ? diff.at_peak : diff.at_dump).sites : [],
  };
}

/** Per rank, in step order: windows whose allocated memory at the dump rose by more than usual. */
function acrossSteps(rows: RunRow[]): Outlier[] {
  const flags: Flag[] = [];
  for (const mine of groupBy(rows, (r) => r.lane).values()) {
    if (mine.length < 3) continue;
    mine.sort((a, b) => a.steps!.first - b.steps!.first);
    const v = mine.map((r) => r.figures.allocated!);
    for (const { i, expected } of jumps(v))
      flags.push({ row: mine[i]!, figure: 'allocated', value: v[i]!, expected, against: null });
  }
  return merge(flags, 'steps', rows).map((m) => m.outlier);
}

/**
 * Windows whose rise from the previous window exceeds the rank's usual change by five robust
 * deviations (and the allocated floor): a leak's steady rise is the usual change.
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
 * On the ranks axis, consecutive windows of a rank where the same figure stands out become one
 * finding; on the steps axis each jump is its own.
 */
function merge(flags: Flag[], axis: Outlier['axis'], rows: RunRow[]): Merged[] {
  const position = rankPositions(rows);
  const out: Merged[] = [];
  const lanes = new Map(laneOrder(rows).map((l, i) => [l.lane, i]));
  const order = (f: Flag) => [lanes.get(f.row.lane)!, FIGURES.indexOf(f.figure), f.row.steps!.first];
  const sorted = [...flags].sort((a, b) => {
    const x = order(a);
    const y = order(b);
    const i = x.findIndex((v, k) => v !== y[k]);
    return i < 0 ? 0 : x[i]! - y[i]!;
  });
  let prev: Flag | null = null;
  for (const f of sorted) {
    const last = out.at(-1);
    const delta = f.value - f.expected;
    const continues =
      axis === 'ranks' &&
      last !== undefined &&
      prev !== null &&
      prev.row.lane === f.row.lane &&
      prev.figure === f.figure &&
      position.get(f.row) === position.get(prev.row)! + 1;
    if (continues) {
      last.outlier.steps.last = f.row.steps!.last;
      last.outlier.max_delta = Math.max(last.outlier.max_delta, delta);
    } else
      out.push({
        first: f,
        outlier: {
          axis,
          replica: f.row.replica,
          rank: f.row.rank,
          device: f.row.device,
          lane: f.row.lane,
          lane_label: f.row.lane_label,
          figure: f.figure,
          steps: { first: f.row.steps!.first, last: f.row.steps!.last },
          value: f.value,
          expected: f.expected,
          delta,
          max_delta: delta,
          against_rank: null,
          against_lane: null,
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
  for (const mine of groupBy(rows, (r) => r.lane).values())
    for (const [i, r] of mine.sort((a, b) => a.steps!.first - b.steps!.first).entries()) position.set(r, i);
  return position;
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) m.set(key(it), [...(m.get(key(it)) ?? []), it]);
  return m;
}
