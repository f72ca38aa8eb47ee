import { useEffect, useRef } from 'react';
import type { CategoryCurve, DeviceCategories } from '../../../../src/engine/analyses/categories/index.js';
import { CATEGORIES, type Category } from '../../../../src/engine/analyses/categories/index.js';
import { formatBytes, formatCount } from '../../format.js';
import { sizedContext, useParentWidth } from '../../timeline/canvas.js';
import { Bytes, EntryLink, type Select, Table } from './bits.js';

const COLORS: Record<Category, string> = {
  parameter: '#5c6bc0',
  gradient: '#26a69a',
  optimizer_state: '#ab47bc',
  activation: '#ffa726',
  temporary: '#ef5350',
  unknown: '#9e9e9e',
};

/** `memlens categories`: live bytes by category over the trace (stacked), the table, and the rules that fired. */
export function CategoriesPanel({ r, select }: { r: DeviceCategories; select: Select }) {
  return (
    <section aria-label="categories">
      <Legend />
      <StackedChart curve={r.curve} select={select} />
      <p>
        peak of the live bytes below: <EntryLink k={r.peak_after_entry} select={select} />
      </p>
      <Table
        head={[
          'Category',
          `At peak (${r.peak_after_entry < 0 ? 'before the first entry' : `after entry ${formatCount(r.peak_after_entry)}`})`,
          'At dump',
          'Max over time',
          'Allocations',
          'Labelled by rules',
        ]}
      >
        {r.categories.map((c) => (
          <tr key={c.category}>
            <td>
              <span className="swatch" style={{ background: COLORS[c.category] }} /> {c.category}
            </td>
            <td className="num">
              <Bytes n={c.peak_bytes} />
            </td>
            <td className="num">
              <Bytes n={c.dump_bytes} />
            </td>
            <td className="num">
              <Bytes n={c.max_bytes} />{' '}
              {c.max_after_entry < 0 ? (
                'before the first entry'
              ) : (
                <>
                  at <EntryLink k={c.max_after_entry} select={select} />
                </>
              )}
            </td>
            <td className="num">{formatCount(c.allocations)}</td>
            <td className="rule-ids">{c.rules.length === 0 ? '—' : c.rules.join(', ')}</td>
          </tr>
        ))}
      </Table>
      <p>rules that fired (first match wins; bytes: all allocations they labelled):</p>
      <Table head={['rule', 'category', 'allocations', 'bytes', 'what it matches']}>
        {r.rules.map((rule) => (
          <tr key={rule.rule} data-rule={rule.rule}>
            <td className="rule-ids">{rule.rule}</td>
            <td>{rule.category}</td>
            <td className="num">{formatCount(rule.allocations)}</td>
            <td className="num">
              <Bytes n={rule.bytes} />
            </td>
            <td>{rule.says}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function Legend() {
  return (
    <p className="legend">
      {CATEGORIES.map((c) => (
        <span key={c}>
          <span className="swatch" style={{ background: COLORS[c] }} /> {c}
        </span>
      ))}
    </p>
  );
}

const HEIGHT = 220;
const AXIS = 70;

/** Stacked areas, one bucket per pixel column or wider; a click selects the bucket's first entry. */
function StackedChart({ curve, select }: { curve: CategoryCurve; select: Select }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const width = useParentWidth(ref);
  const max = Math.max(1, ...Array.from({ length: curve.points }, (_, i) => stackTop(curve, i)));
  useEffect(() => {
    const g = sizedContext(ref.current!, width, HEIGHT);
    const x = (i: number) => AXIS + (i / Math.max(1, curve.points - 1)) * (width - AXIS - 8);
    const y = (b: number) => HEIGHT - 16 - (b / max) * (HEIGHT - 24);
    const base = new Float64Array(curve.points);
    for (const c of CATEGORIES) {
      const top = base.map((b, i) => b + curve.bytes[c][i]!);
      g.beginPath();
      for (let i = 0; i < curve.points; i++) g.lineTo(x(i), y(top[i]!));
      for (let i = curve.points - 1; i >= 0; i--) g.lineTo(x(i), y(base[i]!));
      g.closePath();
      g.fillStyle = COLORS[c];
      g.fill();
      base.set(top);
    }
    g.fillStyle = '#444';
    g.font = '11px system-ui';
    g.textAlign = 'right';
    for (const f of [0, 0.5, 1]) g.fillText(formatBytes(max * f), AXIS - 4, y(max * f) + 4);
  }, [curve, width, max]);
  return (
    <canvas
      ref={ref}
      className="category-chart"
      aria-label="live bytes by category over the trace"
      style={{ width, height: HEIGHT }}
      onClick={(e) => {
        const rect = e.currentTarget.getBoundingClientRect();
        const f = (e.clientX - rect.left - AXIS) / (width - AXIS - 8);
        const i = Math.round(f * (curve.points - 1));
        if (i >= 0 && i < curve.points) select.entry(Math.max(0, curve.first_entry[i]!));
      }}
    />
  );
}

function stackTop(curve: CategoryCurve, i: number): number {
  return CATEGORIES.reduce((sum, c) => sum + curve.bytes[c][i]!, 0);
}
