import type { RunFigure } from '../../../../src/engine/analyses/run/index.js';
import { FIGURE_WORDS } from '../../../../src/engine/analyses/run/index.js';
import { formatBytes } from '../../format.js';
import { type RunGrid, shownRange } from './run-grid.js';

const W = 900;
const H = 220;
const PAD = { left: 70, right: 90, top: 10, bottom: 26 };

/**
 * Each rank's figure across the step windows, one line per rank: the ranks the findings name
 * (outliers, growth) drawn red and labelled, the others grey, so a rank that departs from the
 * pack or climbs step after step is seen as a line, not a number.
 */
export function RankLines({
  grid,
  figure,
  marked,
}: {
  grid: RunGrid;
  figure: RunFigure;
  /** Rank keys (rank:device) the findings name. */
  marked: Set<string>;
}) {
  const steps = grid.columns.flatMap((c, j) => (c.kind === 'step' ? [j] : []));
  if (steps.length < 2) return null;
  const values = grid.cells.flatMap((line) => steps.map((j) => line[j]?.row.figures[figure] ?? null));
  const finite = values.filter((v): v is number => v !== null);
  if (finite.length === 0) return null;
  // Zoomed on the values (not from 0): a rank 20% above the pack must look it, 0.1% must not.
  const [lo, hi] = shownRange(Math.min(...finite), Math.max(...finite));
  const pad = Math.max((hi - lo) * 0.1, 1);
  const bottom = Math.max(0, lo - pad);
  const top = hi + pad;
  const x = (k: number) => PAD.left + (k / (steps.length - 1)) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - ((v - bottom) / (top - bottom)) * (H - PAD.top - PAD.bottom);
  const lines = grid.ranks.map((r, i) => {
    const pts = steps.flatMap((j, k) => {
      const v = grid.cells[i]![j]?.row.figures[figure];
      return v === null || v === undefined ? [] : [`${x(k).toFixed(1)},${y(v).toFixed(1)}`];
    });
    const last = steps
      .map((j) => grid.cells[i]![j]?.row.figures[figure])
      .filter((v): v is number => v !== null && v !== undefined)
      .at(-1);
    return { r, pts, last, hot: marked.has(r.key) };
  });
  return (
    <svg
      className="rank-lines"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`each rank's ${FIGURE_WORDS[figure]} across the steps`}
    >
      {[0, 0.5, 1].map((f) => {
        const v = bottom + (top - bottom) * f;
        return (
          <g key={f}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} className="grid-line" />
            <text x={PAD.left - 6} y={y(v) + 4} textAnchor="end">
              {formatBytes(v)}
            </text>
          </g>
        );
      })}
      {steps.map((j, k) =>
        steps.length <= 20 || k % Math.ceil(steps.length / 20) === 0 ? (
          <text key={j} x={x(k)} y={H - 8} textAnchor="middle">
            {grid.columns[j]!.label}
          </text>
        ) : null,
      )}
      {/* The marked ranks last, so they are drawn over the pack. */}
      {[...lines.filter((l) => !l.hot), ...lines.filter((l) => l.hot)].map(({ r, pts, last, hot }) => (
        <g key={r.key} className={hot ? 'hot' : ''}>
          <polyline points={pts.join(' ')} fill="none">
            <title>{r.label}</title>
          </polyline>
          {hot && last !== undefined && (
            <text x={W - PAD.right + 4} y={y(last) + 4}>
              {r.label}
            </text>
          )}
        </g>
      ))}
      <text x={PAD.left} y={PAD.top + 2} className="axis-title">
        {FIGURE_WORDS[figure]} by step
      </text>
    </svg>
  );
}
