import type { MouseEvent } from 'react';
import type { RunFigure } from '../../../../src/engine/analyses/run/index.js';
import { FIGURE_WORDS } from '../../../../src/engine/analyses/run/index.js';
import { formatBytes } from '../../format.js';
import type { GridCell, RunGrid } from './run-grid.js';

interface Props {
  grid: RunGrid;
  figure: RunFigure;
  /** Cells chosen for a comparison (snapshot indexes): outlined. */
  picked: number[];
  onOpen: (cell: GridCell) => void;
  /** Shift-click: choose the cell for a comparison. */
  onPick: (cell: GridCell) => void;
  /** Why snapshot `index` cannot be opened (a report left it out), or null: its cell is hatched. */
  absent?: (index: number) => string | null;
}

/** Columns narrower than this show no value in the cell (it is in the hover text). */
const TEXT_COLUMNS = 24;

/**
 * Ranks × step windows, each cell shaded by the figure (darker: more), the cells an outlier
 * names outlined in red, OOM dumps red: the rank and step that went wrong stand out. A DOM grid
 * (one element per cell, one click handler for all): 64 × 100 cells draw in a few milliseconds.
 */
export function Heatmap({ grid, figure, picked, onOpen, onPick, absent = () => null }: Props) {
  const [lo, hi] = grid.range;
  const cols = grid.columns.length;
  const showText = cols <= TEXT_COLUMNS;
  const badRanks = new Set(grid.cells.flatMap((line, i) => (line.some(flagged) ? [i] : [])));
  const badColumns = new Set(
    grid.columns.flatMap((_, j) => (grid.cells.some((line) => flagged(line[j] ?? null)) ? [j] : [])),
  );
  // One handler for every cell (React delegates it): the cell is read from the button's data.
  const click = (e: MouseEvent<HTMLButtonElement>) => {
    const el = e.currentTarget;
    const cell = grid.cells[Number(el.dataset.r)]![Number(el.dataset.c)]!;
    if (e.shiftKey) onPick(cell);
    else onOpen(cell);
  };
  return (
    <section
      className={`heatmap${showText ? ' with-text' : ''}`}
      aria-label={`heatmap of ${FIGURE_WORDS[figure]}`}
      style={{ gridTemplateColumns: `max-content repeat(${cols}, minmax(8px, ${showText ? 76 : 40}px))` }}
    >
      <div className="hm-corner">rank \ step</div>
      {grid.columns.map((c, j) => (
        <div key={c.key} className={`hm-col${badColumns.has(j) ? ' bad' : ''}`}>
          {cols > 40 && c.step !== null && c.step % 5 !== 0 ? '' : c.label}
        </div>
      ))}
      {grid.ranks.map((r, i) => (
        <Line
          key={r.key}
          label={r.label}
          bad={badRanks.has(i)}
          cells={grid.cells[i]!}
          i={i}
          figure={figure}
          lo={lo}
          hi={hi}
          showText={showText}
          picked={picked}
          absent={absent}
          onClick={click}
          columns={grid.columns.map((c) => c.label)}
        />
      ))}
    </section>
  );
}

function Line(p: {
  label: string;
  bad: boolean;
  cells: (GridCell | null)[];
  i: number;
  figure: RunFigure;
  lo: number;
  hi: number;
  showText: boolean;
  picked: number[];
  absent: (index: number) => string | null;
  onClick: (e: MouseEvent<HTMLButtonElement>) => void;
  columns: string[];
}) {
  return (
    <>
      <div className={`hm-rank${p.bad ? ' bad' : ''}`}>{p.label}</div>
      {p.cells.map((cell, j) => {
        // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed for a grid
        if (cell === null) return <div key={j} className="hm-empty" />;
        const v = cell.row.figures[p.figure];
        const oom = cell.row.kind === 'oom';
        const share = v === null || p.hi <= p.lo ? 0 : (v - p.lo) / (p.hi - p.lo);
        const missing = p.absent(cell.snapshot);
        const classes = [
          'hm-cell',
          cell.flags.length > 0 ? 'flagged' : '',
          oom ? 'oom' : '',
          p.picked.includes(cell.snapshot) ? 'picked' : '',
          share > 0.55 ? 'dark' : '',
          missing !== null ? 'absent' : '',
        ];
        return (
          <button
            // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed for a grid
            key={j}
            type="button"
            className={classes.filter(Boolean).join(' ')}
            data-cell=""
            data-r={p.i}
            data-c={j}
            data-rank={cell.row.rank}
            data-step={cell.row.steps?.first ?? ''}
            data-kind={cell.row.kind}
            data-value={v ?? ''}
            style={oom ? undefined : { background: shade(v === null ? null : share) }}
            onClick={p.onClick}
            title={hoverText(cell, p.figure, p.label, p.columns[j]!, missing)}
          >
            {p.showText
              ? oom
                ? `OOM ${v === null ? '' : shortBytes(v)}`
                : v === null
                  ? '—'
                  : shortBytes(v)
              : ''}
          </button>
        );
      })}
    </>
  );
}

function flagged(c: GridCell | null): boolean {
  return c !== null && (c.flags.length > 0 || c.row.kind === 'oom');
}

/** Light to dark blue; a missing value (no trace in the window) is hatched grey by CSS. */
function shade(share: number | null): string {
  if (share === null) return '#e0e0e0';
  const l = 95 - share * 62;
  return `hsl(210 55% ${l}%)`;
}

/** "1.4G", "512M": the value that fits a cell. */
export function shortBytes(n: number): string {
  const GiB = 2 ** 30;
  const MiB = 2 ** 20;
  if (n >= 10 * GiB) return `${(n / GiB).toFixed(0)}G`;
  if (n >= GiB) return `${(n / GiB).toFixed(1)}G`;
  if (n >= MiB) return `${(n / MiB).toFixed(0)}M`;
  return `${(n / 1024).toFixed(0)}K`;
}

function hoverText(
  cell: GridCell,
  figure: RunFigure,
  rank: string,
  column: string,
  missing: string | null,
): string {
  const v = cell.row.figures[figure];
  const where = cell.row.kind === 'oom' ? `${rank}, OOM dump` : `${rank}, step ${column}`;
  const lines = [where, `${FIGURE_WORDS[figure]}: ${v === null ? 'no trace in the window' : formatBytes(v)}`];
  for (const o of cell.flags)
    lines.push(`stands out: +${formatBytes(o.delta)} over ${formatBytes(o.expected)} expected`);
  lines.push(cell.row.file);
  lines.push(missing ?? 'click: open this snapshot · shift-click two cells: compare them');
  return lines.join('\n');
}
