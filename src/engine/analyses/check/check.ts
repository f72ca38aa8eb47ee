/**
 * `memlens check`: every budget and, with a baseline, every figure against the baseline's, each a
 * rule that holds or fails with its figure, its limit, where it was largest and the sites that
 * account for most of it (or, against a baseline, the sites that grew most).
 */
import { formatBytes, formatCount, plural } from '../../base/format.js';
import { shellWord } from '../diagnosis/finding.js';
import { diffMoment } from '../diff/diff.js';
import type { SiteSide } from '../diff/diff-side.js';
import { firstAppearance } from './appearance.js';
import type { Baseline, BaselineRank } from './baseline.js';
import { peakSides } from './baseline.js';
import { type CellFigure, type CellPair, compareCells } from './baseline-cells.js';
import { amountBytes, type Budgets } from './budgets.js';
import {
  type CheckFigure,
  type Figures,
  largest,
  type Measured,
  type PeakCounts,
  type RankPeaks,
  rankPeaks,
  TOP_SITES,
} from './check-figures.js';
import {
  type BlamedSegment,
  type BlamedSite,
  type CheckSubject,
  type Place,
  placeText,
} from './check-subject.js';

export interface RuleResult {
  /** The option that set it ("max-peak-allocated"), or "baseline-<figure>". */
  rule: string;
  figure: CheckFigure;
  /** null: not judged, the record cannot show the figure (`message` says why); it fails nothing. */
  passed: boolean | null;
  unit: 'bytes' | 'count';
  value: number;
  /**
   * An allocated peak: `trace_requested` (the trace's peak, in requested bytes) or `dump_blocks`
   * (the bytes of the blocks allocated at the dump, where those are more); null for other figures.
   */
  counts: PeakCounts | null;
  /** The most the rule allows (bytes or a count). */
  limit: number;
  /** Against a baseline: its figure (the limit adds the tolerance). */
  baseline: number | null;
  place: Place | null;
  /** Against a baseline, in a run: the first step (of the peak's rank) where the site that grew most held its bytes. */
  appears: Place | null;
  /** What accounts for most of the figure; against a baseline, what grew most since it. */
  sites: BlamedSite[];
  /** Fragmentation: the segments holding a tensor with the most free bytes at the reserved peak. */
  segments: BlamedSegment[];
  /** A run's cells against the baseline's (baseline-step-*): the cells the baseline lacks, "rank 2, step 3". */
  not_in_baseline: string[];
  /** The baseline's cells this run lacks (baseline-step-*): a rank that stopped dumping, a step that never came. */
  not_in_run: string[];
  message: string;
  /** The memlens command that shows more. */
  command: string;
}

export interface CheckResult {
  subject: string;
  kind: CheckSubject['kind'];
  /** No rule broken (a rule not judged breaks nothing). */
  passed: boolean;
  rules: RuleResult[];
}

const WORDS: Record<CheckFigure, string> = {
  peak_allocated: 'peak allocated',
  peak_reserved: 'peak reserved',
  fragmentation: 'reserved above allocated at the peak',
  ooms: 'OOMs',
  leaks: 'leaking sites',
  growth_per_step: 'growth per step',
};

/** What an allocated peak counts, in the message and (short) in a Markdown table's cell. */
export const COUNTS_WORDS: Record<PeakCounts, { long: string; short: string }> = {
  trace_requested: { long: 'in requested bytes', short: 'requested' },
  dump_blocks: {
    long: "in blocks allocated at the dump, above the trace's peak in requested bytes",
    short: 'blocks at the dump',
  },
};

const UNITS: Record<CheckFigure, RuleResult['unit']> = {
  peak_allocated: 'bytes',
  peak_reserved: 'bytes',
  fragmentation: 'bytes',
  ooms: 'count',
  leaks: 'count',
  growth_per_step: 'bytes',
};

export function checkSubject(
  subject: CheckSubject,
  figures: Figures,
  budgets: Budgets,
  baseline: Baseline | null = null,
): CheckResult {
  const rules = [...budgetRules(subject, figures, budgets)];
  if (baseline !== null) rules.push(...baselineRules(subject, figures, baseline, budgets));
  return {
    subject: subject.label,
    kind: subject.kind,
    passed: rules.every((r) => r.passed !== false),
    rules,
  };
}

function budgetRules(subject: CheckSubject, f: Figures, b: Budgets): RuleResult[] {
  const out: RuleResult[] = [];
  const add = (rule: string, figure: CheckFigure, limit: number | undefined, words?: string) => {
    if (limit !== undefined) out.push(rule_(subject, rule, figure, f[figure], limit, null, words));
  };
  add('max-peak-allocated', 'peak_allocated', b.max_peak_allocated);
  add('max-peak-reserved', 'peak_reserved', b.max_peak_reserved);
  const frag = b.max_fragmentation;
  if (frag !== undefined) {
    const limit = Math.floor(amountBytes(frag, f.fragmentation.of_bytes ?? 0));
    const words =
      'percent' in frag ? `${frag.percent}% of the reserved peak (${formatBytes(limit)})` : undefined;
    add('max-fragmentation', 'fragmentation', limit, words);
  }
  if (b.no_oom) add('no-oom', 'ooms', 0);
  if (b.no_leak) add('no-leak', 'leaks', 0);
  add('max-growth-per-step', 'growth_per_step', b.max_growth_per_step);
  return out;
}

type Slack = (figure: CheckFigure, was: number) => number;

/**
 * Each figure no larger than the baseline's, byte figures within the tolerance; a run's peaks rank
 * by rank, and cell by cell (each rank's step windows against the baseline's same cells).
 */
function baselineRules(subject: CheckSubject, f: Figures, base: Baseline, b: Budgets): RuleResult[] {
  const slack: Slack = (figure, was) =>
    Math.floor(was + (UNITS[figure] === 'bytes' && b.tolerance ? amountBytes(b.tolerance, was) : 0));
  const cells =
    subject.kind === 'run' && base.cells.length > 0
      ? (['peak_allocated', 'peak_reserved'] as const).map((x) => cellRule(subject, base, x, slack))
      : [];
  return [...figureRules(subject, f, base, slack), ...cells];
}

function figureRules(subject: CheckSubject, f: Figures, base: Baseline, slack: Slack): RuleResult[] {
  const ranks = subject.kind === 'run' && base.ranks.length > 0 ? rankPeaks(subject) : [];
  return (Object.keys(WORDS) as CheckFigure[]).map((figure) => {
    const name = `baseline-${figure.replace(/_/g, '-')}`;
    const was = base.figures[figure];
    if (figure !== 'peak_allocated' && figure !== 'peak_reserved')
      return rule_(subject, name, figure, f[figure], slack(figure, was), was);
    const worst = worstRank(ranks, base, figure, slack);
    if (worst !== null)
      return rule_(
        subject,
        name,
        figure,
        grownSites(subject, worst.now, worst.base.sites),
        worst.limit,
        worst.base[figure],
      );
    return rule_(
      subject,
      name,
      figure,
      grownSites(subject, f[figure], base.peak.sites),
      slack(figure, was),
      was,
    );
  });
}

/**
 * The rank furthest above its own baseline peak (null: the run has no ranks). A rank the baseline
 * lacks (the run grew a rank, or a device) is held to the baseline run's own peak: skipping it
 * would let a new rank's regression pass unseen.
 */
function worstRank(
  ranks: RankPeaks[],
  base: Baseline,
  figure: 'peak_allocated' | 'peak_reserved',
  slack: Slack,
): { now: Measured; base: BaselineRank; limit: number } | null {
  let worst: { now: Measured; base: BaselineRank; limit: number } | null = null;
  for (const r of ranks) {
    const was = base.ranks.find((x) => x.rank === r.rank && x.device === r.device) ?? wholeRun(base, r);
    const limit = slack(figure, was[figure]);
    if (worst === null || r[figure].value - limit > worst.now.value - worst.limit)
      worst = { now: r[figure], base: was, limit };
  }
  return worst;
}

/** The baseline run's own peaks and sites, standing in for a rank it did not have. */
function wholeRun(base: Baseline, r: RankPeaks): BaselineRank {
  return {
    rank: r.rank,
    device: r.device,
    peak_allocated: base.figures.peak_allocated,
    peak_reserved: base.figures.peak_reserved,
    sites: base.peak.sites,
  };
}

/**
 * Every step window of the run against the baseline's same cell. A broken rule names the first
 * cell (in step order) above its own baseline: where the regression appears, even when it never
 * reaches the rank's peak. Holding, it shows the cell closest to its limit.
 */
function cellRule(subject: CheckSubject, base: Baseline, figure: CellFigure, slack: Slack): RuleResult {
  const { pairs, missing, absent } = compareCells(subject, base.cells, base.cell_sites, figure);
  const name = `baseline-step-${figure.replace(/_/g, '-')}`;
  const over = (p: CellPair) => p.value - slack(figure, p.was);
  const broken = pairs.filter((p) => over(p) > 0);
  const shown = broken[0] ?? largest(pairs, over);
  const rule =
    shown === null
      ? rule_(subject, name, figure, { value: 0, place: null, sites: [] }, 0, null)
      : rule_(
          subject,
          name,
          figure,
          grownSites(
            subject,
            { value: shown.value, place: shown.place, sites: [], ...cellCounts(figure) },
            shown.sites,
          ),
          slack(figure, shown.was),
          shown.was,
        );
  const notes = [
    ...(broken.length > 1
      ? [`${broken.length} of ${plural(pairs.length, 'cell')} above their baseline`]
      : []),
    ...(shown === null ? ['no cell of the run is in the baseline'] : []),
    ...(missing.length > 0 ? [`not in the baseline: ${listed(missing)}`] : []),
    ...(absent.length > 0 ? [`in the baseline but not in this run: ${listed(absent)}`] : []),
  ];
  return {
    ...rule,
    message: [...(shown === null ? [] : [rule.message]), ...notes].join('; '),
    not_in_baseline: missing,
    not_in_run: absent,
  };
}

/** A step window's peaks are its trace's: an allocated one counts requested bytes. */
function cellCounts(figure: CellFigure): Pick<Measured, 'counts'> {
  return figure === 'peak_allocated' ? { counts: 'trace_requested' } : {};
}

/** The first few of a list, and how many more. */
function listed(names: string[], shown = 3): string {
  const more = names.length - shown;
  return `${names.slice(0, shown).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The figure with, as its sites, those whose bytes at the allocated peak grew most since the baseline. */
function grownSites(subject: CheckSubject, now: Measured, baseSites: SiteSide[]): Measured {
  const mine = peakSides(subject, now.place, true);
  const d = diffMoment(
    { after_entry: -1, sites: baseSites },
    { after_entry: -1, sites: mine },
    TOP_SITES * 3,
  );
  const grown = d.sites.filter((s) => s.delta_bytes > 0).slice(0, TOP_SITES);
  const sites = grown.map((s) => ({
    bytes: s.delta_bytes,
    frames: s.frames.map(({ filename, line, name }) => ({ filename, line, name })),
  }));
  const top = grown[0];
  const appears =
    subject.kind === 'run' && now.place !== null && top !== undefined
      ? firstAppearance(subject, now.place, sites[0]!, top.b_bytes)
      : null;
  return { ...now, sites, appears };
}

function rule_(
  subject: CheckSubject,
  rule: string,
  figure: CheckFigure,
  m: Measured,
  limit: number,
  baseline: number | null,
  limitWords?: string,
): RuleResult {
  // Over the limit is a verdict whatever the record missed; within it, only if it could show it.
  const passed = m.value > limit ? false : m.unseen ? null : true;
  return {
    rule,
    figure,
    passed,
    unit: UNITS[figure],
    value: m.value,
    counts: m.counts ?? null,
    limit,
    baseline,
    place: m.place,
    appears: m.appears ?? null,
    sites: passed === false ? m.sites : [],
    segments: passed === false ? (m.segments ?? []) : [],
    not_in_baseline: [],
    not_in_run: [],
    message: message(figure, m, limit, baseline, passed, limitWords),
    command: commandFor(subject, figure, m),
  };
}

function amount(figure: CheckFigure, n: number): string {
  return UNITS[figure] === 'bytes' ? formatBytes(n) : formatCount(n);
}

function message(
  figure: CheckFigure,
  m: Measured,
  limit: number,
  baseline: number | null,
  passed: boolean | null,
  limitWords = amount(figure, limit),
): string {
  if (passed === null) return `${WORDS[figure]} not judged: ${m.unseen}`;
  const counted = UNITS[figure] === 'count';
  const what = counted
    ? plural(m.value, figure === 'ooms' ? 'OOM' : 'leaking site')
    : `${WORDS[figure]} ${amount(figure, m.value)}${m.counts ? ` ${COUNTS_WORDS[m.counts].long}` : ''}`;
  const against =
    baseline === null
      ? counted && limit === 0
        ? 'none allowed'
        : `the budget of ${limitWords}`
      : `the baseline's ${amount(figure, baseline)}${limit > baseline ? ` + tolerance (${amount(figure, limit)})` : ''}`;
  if (passed) return against === 'none allowed' ? what : `${what}: within ${against}`;
  const where = placeText(m.place);
  const at = where === '' ? '' : ` (${where})`;
  const first =
    m.appears && m.appears.step !== m.place?.step
      ? `; the site first holds it at ${placeText(m.appears)}`
      : '';
  const verdict = against === 'none allowed' ? against : `${baseline === null ? 'over' : 'above'} ${against}`;
  return `${what}${at}: ${verdict}${first}`;
}

/** The command whose output explains the figure: the analysis it comes from, on the file where it was largest. */
function commandFor(subject: CheckSubject, figure: CheckFigure, m: Measured): string {
  const place = m.place;
  const file = shellWord(place?.file || subject.label);
  if (subject.kind === 'run' && (figure === 'leaks' || figure === 'growth_per_step'))
    return `memlens run ${shellWord(subject.label)}`;
  const cmd: Record<CheckFigure, string> = {
    peak_allocated: 'peak',
    peak_reserved: 'peak',
    fragmentation: 'frag',
    ooms: 'oom',
    leaks: 'leaks',
    growth_per_step: 'leaks',
  };
  return `memlens ${cmd[figure]} ${file}${figure === 'fragmentation' ? fragOptions(m) : ''}`;
}

/** `memlens frag` at the moment and on the device the segments were found. */
function fragOptions(m: Measured): string {
  const device = m.place !== null && m.place.device !== 0 ? ` --device ${m.place.device}` : '';
  return `${m.at_entry != null ? ` --at ${m.at_entry}` : ''}${device}`;
}
