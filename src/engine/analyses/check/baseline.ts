/**
 * What a check compares against: the figures of another snapshot or run, or their summary that
 * `check --save-baseline` writes (small enough to commit: figures, and the live allocations by
 * site at the allocated peak, the largest few dozen; for a run, each rank's and each cell's).
 */
import type { Frame } from '../../model/stack-table.js';
import type { SiteSide } from '../diff/diff-side.js';
import { type BaselineCell, baselineCells, cellsProblem, isFrames } from './baseline-cells.js';
import { CHECK_FIGURES, type CheckFigure, type Figures, rankPeaks } from './check-figures.js';
import type { CheckSubject, Place } from './check-subject.js';

/**
 * 2: a run's cells (each rank's step windows) were added. 3: a peak_allocated figure (the run's
 * and each rank's) is the dump's allocated block bytes where those pass the trace's requested
 * peak (check-figures.ts), which a version 2 figure never was. An older file is saved again.
 */
export const BASELINE_VERSION = 3;

/** Sites kept at the peak: enough that any site that grows into the top few was listed. */
const BASELINE_SITES = 50;

export interface Baseline {
  memlens_check_baseline: number;
  /** The file or run it was taken from. */
  source: string;
  figures: Record<CheckFigure, number>;
  /** The allocated peak's place and its live allocations by site (the diff's half). */
  peak: { place: Place | null; sites: SiteSide[] };
  /** A run's ranks, each with its own peaks and its sites at its allocated peak (empty for a file). */
  ranks: BaselineRank[];
  /** A run's step windows, each with its peaks and largest sites (empty for a file). */
  cells: BaselineCell[];
  /** The frames of the sites `cells` name, by index. */
  cell_sites: Frame[][];
}

export interface BaselineRank {
  rank: number | null;
  device: number;
  peak_allocated: number;
  peak_reserved: number;
  sites: SiteSide[];
}

/** Sites kept per rank: fewer than at the run's peak, as a run may have hundreds of ranks. */
const RANK_SITES = 20;

export class BaselineError extends Error {}

export function baselineOf(subject: CheckSubject, figures: Figures): Baseline {
  return {
    memlens_check_baseline: BASELINE_VERSION,
    source: subject.label,
    figures: Object.fromEntries(CHECK_FIGURES.map((f) => [f, figures[f].value])) as Record<
      CheckFigure,
      number
    >,
    peak: { place: figures.peak_allocated.place, sites: peakSides(subject, figures.peak_allocated.place) },
    ranks:
      subject.kind === 'run'
        ? rankPeaks(subject).map((r) => ({
            rank: r.rank,
            device: r.device,
            peak_allocated: r.peak_allocated.value,
            peak_reserved: r.peak_reserved.value,
            sites: peakSides(subject, r.peak_allocated.place).slice(0, RANK_SITES),
          }))
        : [],
    ...baselineCells(subject),
  };
}

/** Every site live at the place's allocated peak (the largest BASELINE_SITES, with `all` false). */
export function peakSides(subject: CheckSubject, place: Place | null, all = false): SiteSide[] {
  if (place === null) return [];
  const side = subject.results.get(place.file)?.side.devices.find((d) => d.device === place.device);
  const sites = side?.at_peak.sites ?? [];
  return all ? sites : sites.slice(0, BASELINE_SITES);
}

/** A saved baseline read back; anything else is an error saying what is wrong. */
export function parseBaseline(json: unknown): Baseline {
  const b = json as Partial<Baseline> | null;
  if (typeof b !== 'object' || b === null || b.memlens_check_baseline === undefined)
    throw new BaselineError('not a memlens check baseline (no "memlens_check_baseline" field)');
  if (b.memlens_check_baseline !== BASELINE_VERSION)
    throw new BaselineError(
      `baseline version ${String(b.memlens_check_baseline)}, this memlens reads version ${BASELINE_VERSION} (write it again with check --save-baseline)`,
    );
  const figures = b.figures as Record<string, unknown> | undefined;
  for (const f of CHECK_FIGURES)
    if (typeof figures?.[f] !== 'number' || !Number.isFinite(figures[f]))
      throw new BaselineError(`baseline figure ${f} is missing or not a number`);
  const sites = b.peak?.sites;
  if (!Array.isArray(sites) || !sites.every(isSite))
    throw new BaselineError('baseline peak.sites is missing or malformed');
  const ranks = b.ranks ?? [];
  if (!Array.isArray(ranks) || !ranks.every(isRank))
    throw new BaselineError(
      'baseline ranks is malformed (each: rank, device, peak_allocated, peak_reserved, sites)',
    );
  const cellsWrong = cellsProblem(b.cells, b.cell_sites);
  if (cellsWrong !== null) throw new BaselineError(cellsWrong);
  return { ...b, ranks } as Baseline;
}

function isRank(r: unknown): r is BaselineRank {
  const x = r as BaselineRank;
  return (
    typeof x === 'object' &&
    x !== null &&
    (x.rank === null || typeof x.rank === 'number') &&
    typeof x.device === 'number' &&
    typeof x.peak_allocated === 'number' &&
    typeof x.peak_reserved === 'number' &&
    Array.isArray(x.sites) &&
    x.sites.every(isSite)
  );
}

function isSite(s: unknown): s is SiteSide {
  const x = s as SiteSide;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.bytes === 'number' &&
    typeof x.count === 'number' &&
    isFrames(x.frames)
  );
}
