import { shellWord } from '../../engine/analyses/diagnosis/index.js';
import type { RunReport } from '../../engine/analyses/run/index.js';
import {
  columnOrder,
  FIGURE_WORDS,
  growthHeadline,
  laneOrder,
  oomHeadline,
  outlierHeadline,
  type RunFigure,
  type RunLead,
  type RunRow,
  runComparable,
  runLead,
  windowRows,
} from '../../engine/analyses/run/index.js';
import { formatBytes, plural } from '../../engine/base/index.js';
import { pc } from '../text/colors.js';
import { commandLines } from '../text/command-lines.js';
import { wrapIndented } from '../text/indent.js';

/** The figures the text shows as rank × step tables; --json has them all. */
const TABLES: RunFigure[] = ['peak_allocated', 'allocated'];
const CELL = 10;
const LABEL = 10;

export function renderRun(r: RunReport, width: number): string {
  const lanes = laneOrder(r.rows);
  const columns = columnOrder(r.rows);
  const lines = [
    pc.bold(r.root),
    `  ${r.layout} layout: ${shape(r)}`,
    ...r.layout_doubts.flatMap((d) => wrapIndented(d, width, '  ', '    ')),
    ...leadLines(runLead(r), width),
  ];
  for (const figure of TABLES) lines.push('', ...table(r, lanes, columns, figure, width));
  // "Nothing stands out" is a verdict only where something was compared; where nothing could
  // be, one line says why for both questions.
  if (runComparable(r.rows)) {
    lines.push('', ...section('stands out', r.outliers.map(outlierHeadline), 'no rank or step stands out'));
    lines.push(
      ...section(
        'grows window after window',
        r.growth.map(growthHeadline),
        'no site grows window after window',
      ),
    );
  } else {
    lines.push(
      '',
      `  ${pc.dim('outliers and growth not judged: a step needs 3 ranks, or a rank 3 windows, to compare them')}`,
    );
  }
  lines.push(
    ...section(
      'OOMs',
      r.ooms.map((o) => `${oomHeadline(o)}  (memlens oom ${shellWord(o.file)})`),
      'no OOM',
    ),
  );
  lines.push(...section('several dumps in one cell', r.shared.map(sharedText), ''));
  const failed = [
    ...r.not_read.map((n) => `${n.path}: ${n.reason}`),
    ...r.snapshots.filter((s) => s.error !== undefined).map((s) => `${s.file}: ${s.error}`),
  ];
  lines.push(...section('not read', failed, ''));
  if (r.unplaced.length > 0) lines.push(...section('no rank or step in the name', r.unplaced, ''));
  if (r.skipped.length > 0)
    lines.push(
      `  ${pc.dim(`${plural(r.skipped.length, 'other file')} skipped: not snapshots (--verbose lists them)`)}`,
    );
  return lines.join('\n');
}

/** "4 ranks × 3 step windows, 2 other dumps, 1 OOM dump, 13 files": what the tables hold. */
function shape(r: RunReport): string {
  if (r.snapshots.length === 0) return 'no snapshot could be read';
  const windows = windowRows(r.rows);
  const ranks = new Set(r.rows.map((w) => `${w.replica ?? ''}:${w.rank}`)).size;
  const steps = new Set(windows.map((w) => w.column)).size;
  const oomFiles = r.snapshots.filter((s) => s.kind === 'oom').length;
  const others = r.snapshots.filter(
    (s) => s.kind !== 'oom' && !(s.kind === 'step' && s.step !== null),
  ).length;
  return (
    plural(ranks, 'rank') +
    (steps > 0 ? ` × ${plural(steps, 'step window')}` : '') +
    (others > 0 ? `, ${plural(others, 'dump')} outside step windows` : '') +
    (oomFiles > 0 ? `, ${plural(oomFiles, 'OOM dump')}` : '') +
    `, ${plural(r.snapshots.length, 'file')}`
  );
}

function sharedText(s: RunReport['shared'][number]): string {
  return `${s.where} holds ${s.files.length} dumps: ${s.files.map((f) => `${f.file} (${f.lane})`).join(', ')}`;
}

/** Each file left out of the run as not a snapshot, with why (memlens run --verbose). */
export function skippedText(r: RunReport): string[] {
  return r.skipped.map((s) => `  skipped ${s.path}: ${s.reason}`);
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
 * One figure as lanes × columns (step windows, then each other dump where it falls), the cells
 * that stand out marked with *. Columns that do not fit the width are left out from the middle,
 * and the line says which.
 */
function table(
  r: RunReport,
  lanes: { lane: string; label: string }[],
  columns: string[],
  figure: RunFigure,
  width: number,
): string[] {
  const fit = Math.max(2, Math.floor((width - 4 - LABEL) / CELL));
  const shown =
    columns.length <= fit
      ? columns
      : [...columns.slice(0, Math.ceil(fit / 2)), ...columns.slice(-Math.floor(fit / 2))];
  const hidden = columns.length - shown.length;
  const flagged = new Set(
    r.outliers
      .filter((o) => o.figure === figure)
      .flatMap((o) =>
        windowRows(r.rows).filter(
          (w) => w.lane === o.lane && w.steps!.first >= o.steps.first && w.steps!.last <= o.steps.last,
        ),
      ),
  );
  const label = Math.max(LABEL, ...lanes.map((l) => l.label.length + 1));
  const head = `    ${'step'.padEnd(label)}${shown.map((s) => s.slice(0, CELL - 1).padStart(CELL)).join('')}`;
  const out = [
    `  ${FIGURE_WORDS[figure]}${hidden > 0 ? pc.dim(` (${plural(hidden, 'middle column')} not shown: see --json)`) : ''}`,
    pc.dim(head),
  ];
  for (const { lane, label: name } of lanes) {
    const cells = shown.map((s) => {
      const row: RunRow | undefined = r.rows.find((w) => w.lane === lane && w.column === s);
      const v = row?.figures[figure];
      const text = v === undefined || v === null ? '—' : formatBytes(v);
      return row && flagged.has(row) ? pc.yellow(`${text}*`.padStart(CELL)) : `${text} `.padStart(CELL);
    });
    out.push(`    ${name.padEnd(label)}${cells.join('')}`);
  }
  return out;
}
