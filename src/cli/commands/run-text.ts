import { shellWord } from '../../engine/analyses/diagnosis/finding.js';
import { type RunLead, runLead } from '../../engine/analyses/run/run-lead.js';
import type { RunReport } from '../../engine/analyses/run/run-report.js';
import {
  type RunFigure,
  type RunRow,
  runComparable,
  stepLabel,
  windowRows,
} from '../../engine/analyses/run/run-table.js';
import {
  FIGURE_WORDS,
  growthHeadline,
  oomHeadline,
  outlierHeadline,
} from '../../engine/analyses/run/run-words.js';
import { formatBytes, plural } from '../../engine/format.js';
import { pc } from '../colors.js';
import { commandLines } from '../command-lines.js';
import { wrapIndented } from '../indent.js';

/** The figures the text shows as rank × step tables; --json has them all. */
const TABLES: RunFigure[] = ['peak_allocated', 'allocated'];
const CELL = 10;
const LABEL = 10;

export function renderRun(r: RunReport, width: number): string {
  const windows = windowRows(r.rows);
  const ranks = [...new Set(windows.map((w) => w.rank))].sort((a, b) => a - b);
  const steps = [...new Set(windows.map((w) => stepLabel(w.steps)))];
  const ooms = r.snapshots.filter((s) => s.kind === 'oom').length;
  const lines = [
    pc.bold(r.root),
    `  ${r.layout} layout: ${plural(ranks.length, 'rank')} × ${plural(steps.length, 'step window')}` +
      (ooms > 0 ? `, ${plural(ooms, 'OOM dump')}` : '') +
      `, ${plural(r.snapshots.length, 'file')}`,
    ...leadLines(runLead(r), width),
  ];
  for (const figure of TABLES) lines.push('', ...table(r, windows, ranks, steps, figure, width));
  // "Nothing stands out" is a verdict only where something was compared.
  const none = (what: string) =>
    runComparable(r.rows) ? what : 'not judged: a step needs 3 ranks, or a rank 3 windows, to compare them';
  lines.push(
    '',
    ...section('stands out', r.outliers.map(outlierHeadline), none('no rank or step stands out')),
  );
  lines.push(
    ...section(
      'grows window after window',
      r.growth.map(growthHeadline),
      none('no site grows window after window'),
    ),
  );
  lines.push(
    ...section(
      'OOMs',
      r.ooms.map((o) => `${oomHeadline(o)}  (memlens oom ${shellWord(o.file)})`),
      'no OOM',
    ),
  );
  const failed = r.snapshots.filter((s) => s.error !== undefined);
  if (failed.length > 0)
    lines.push(
      ...section(
        'not read',
        failed.map((s) => `${s.file}: ${s.error}`),
        '',
      ),
    );
  if (r.unplaced.length > 0) lines.push(...section('no rank or step in the name', r.unplaced, ''));
  return lines.join('\n');
}

/** The run's worst finding first, with the command that opens its snapshot. */
function leadLines(lead: RunLead | null, width: number): string[] {
  if (lead === null) return [];
  const out = wrapIndented(`worst first: ${lead.headline}`, width, '  ', '    ').map(pc.bold);
  if (lead.file !== null)
    out.push(
      ...commandLines(
        `memlens ${lead.kind === 'oom' ? 'oom ' : ''}${shellWord(lead.file)}`,
        width,
        '    ',
      ).map(pc.dim),
    );
  return out;
}

function section(title: string, items: string[], none: string): string[] {
  if (items.length === 0) return none === '' ? [] : [`  ${pc.dim(none)}`];
  return [`  ${pc.bold(title)} (${items.length}):`, ...items.map((i) => `    ${i}`)];
}

/**
 * One figure as ranks × steps, the cells that stand out marked with *. Steps that do not fit the
 * width are left out from the middle, and the line says which.
 */
function table(
  r: RunReport,
  windows: RunRow[],
  ranks: number[],
  steps: string[],
  figure: RunFigure,
  width: number,
): string[] {
  const fit = Math.max(2, Math.floor((width - 4 - LABEL) / CELL));
  const shown =
    steps.length <= fit
      ? steps
      : [...steps.slice(0, Math.ceil(fit / 2)), ...steps.slice(-Math.floor(fit / 2))];
  const hidden = steps.length - shown.length;
  const flagged = new Set(
    r.outliers
      .filter((o) => o.figure === figure)
      .flatMap((o) =>
        windows.filter(
          (w) => w.rank === o.rank && w.steps!.first >= o.steps.first && w.steps!.last <= o.steps.last,
        ),
      ),
  );
  const head = `    ${'step'.padEnd(LABEL)}${shown.map((s) => s.padStart(CELL)).join('')}`;
  const out = [
    `  ${FIGURE_WORDS[figure]}${hidden > 0 ? pc.dim(` (${plural(hidden, 'middle step')} not shown: see --json)`) : ''}`,
    pc.dim(head),
  ];
  for (const rank of ranks) {
    const cells = shown.map((s) => {
      const row = windows.find((w) => w.rank === rank && stepLabel(w.steps) === s);
      const v = row?.figures[figure];
      const text = v === undefined || v === null ? '—' : formatBytes(v);
      return row && flagged.has(row) ? pc.yellow(`${text}*`.padStart(CELL)) : `${text} `.padStart(CELL);
    });
    out.push(`    ${`rank ${rank}`.padEnd(LABEL)}${cells.join('')}`);
  }
  return out;
}
