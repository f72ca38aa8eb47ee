/** The run's findings in words, the same in the CLI, the web Run page and reports. */
import { formatBytes } from '../../base/format.js';
import { formatFrame } from '../../derived/frames/short-path.js';
import type { GrowingSite } from './growth.js';
import type { Outlier } from './outliers.js';
import type { RunOom } from './run-report.js';
import type { RunFigure } from './run-table.js';

export const FIGURE_WORDS: Record<RunFigure, string> = {
  peak_allocated: 'peak allocated in the window',
  peak_reserved: 'peak reserved in the window',
  allocated: 'allocated at the dump',
  reserved: 'reserved at the dump',
  non_releasable: 'non-releasable at the dump',
};

function stepsText(first: number, last: number): string {
  return first === last ? `step ${first}` : `steps ${first}–${last}`;
}

export function outlierHeadline(o: Outlier): string {
  const where = `${o.lane_label}, ${stepsText(o.steps.first, o.steps.last)}`;
  const what = FIGURE_WORDS[o.figure];
  const figures = `${formatBytes(o.value)} vs ${formatBytes(o.expected)}`;
  if (o.axis === 'steps')
    return `${where}: ${what} rose ${formatBytes(o.delta)} more than the rank's usual change from the previous window (${figures} expected)`;
  const than = o.against_lane === null ? "the step's median rank" : `the median rank, ${o.against_lane}`;
  const most = o.max_delta > o.delta * 1.05 ? `, up to ${formatBytes(o.max_delta)}` : '';
  const site = o.blame.find((s) => s.delta_bytes > 0);
  const blame = site ? `; by site: +${formatBytes(site.delta_bytes)} at ${siteText(site.frames)}` : '';
  return `${where}: ${what} ${formatBytes(o.delta)} above ${than} (${figures}${most})${blame}`;
}

export function growthHeadline(g: GrowingSite): string {
  const ranks = g.ranks
    .map(
      (r) =>
        `${r.lane_label} from step ${r.first_step} (${formatBytes(r.bytes[0]!)} → ${formatBytes(r.bytes.at(-1)!)})`,
    )
    .join(', ');
  return `${siteText(g.frames)} grows ${formatBytes(g.bytes_per_step)} per step: ${ranks}`;
}

export function oomHeadline(o: RunOom): string {
  const when =
    o.after_step !== null
      ? `after step ${o.after_step}`
      : o.in_step !== null
        ? `in step ${o.in_step}`
        : 'in the run';
  const verdicts = o.devices.flatMap((d) => d.reports.map((r) => r.verdict));
  const rank = o.rank === null ? '' : `rank ${o.rank} `;
  if (verdicts.length === 0) return `${rank}OOM dump ${when} (no oom entry in its trace)`;
  return `${rank}OOM ${when}: ${[...new Set(verdicts)].join(', ')}`;
}

export function siteText(frames: readonly { filename: string; line: number; name: string }[]): string {
  return frames.length === 0 ? '(no stack recorded)' : formatFrame(frames[0]!);
}
