import { useState } from 'react';
import { formatBytes } from '../../format.js';
import type { EngineClient } from '../../worker/client.js';
import type { Source } from '../../worker/protocol.js';
import type { AllocCurve } from '../../worker/run-protocol.js';
import { useQuery } from '../analyses/use-query.js';

interface Props {
  client: EngineClient;
  /** The open file (A) and its device. */
  device: number;
  labelA: string;
  /** The compared file (B) and its device. */
  other: Source;
  deviceB: number;
  labelB: string;
}

type Align = 'start' | 'step';

const W = 900;
const H = 240;
const PAD = { left: 70, right: 16, top: 12, bottom: 30 };

/**
 * Two snapshots' allocated memory on one axis ("a ruler on my desk", pytorch/pytorch#120245):
 * from each trace's start, or from each one's first step marker, so the same phase of two ranks
 * or two steps lines up.
 */
export function PairCurves({ client, device, labelA, other, deviceB, labelB }: Props) {
  const [align, setAlign] = useState<Align>('start');
  const answer = useQuery(client, 'curves', { device, other, deviceB, points: 600 });
  if (answer.status === 'loading') return <p className="hint">drawing both curves…</p>;
  if (answer.status === 'error') return <p className="error">{answer.message}</p>;
  const { a, b } = answer.value;
  const canStep = a.firstStep !== null && b.firstStep !== null;
  const shiftOf = (c: AllocCurve) => (align === 'step' && canStep ? c.firstStep! : 0);
  const [sa, sb] = [shiftOf(a), shiftOf(b)];
  const xs = [...a.x].map((x) => x - sa).concat([...b.x].map((x) => x - sb));
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs, x0 + 1);
  const top = Math.max(...a.y, ...b.y, 1) * 1.05;
  const px = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const py = (v: number) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);
  const path = (c: AllocCurve, shift: number) =>
    [...c.x].map((x, i) => `${px(x - shift).toFixed(1)},${py(c.y[i]!).toFixed(1)}`).join(' ');
  const unit = a.axis === 'time' ? (x1 - x0 > 2e6 ? 's' : 'ms') : 'entries';
  const tick = (x: number) =>
    a.axis === 'time'
      ? unit === 's'
        ? `${(x / 1e6).toFixed(1)} s`
        : `${(x / 1e3).toFixed(0)} ms`
      : `${Math.round(x)}`;
  return (
    <section className="pair-curves" aria-label="allocated memory of both snapshots">
      <p className="pair-legend">
        <span className="key a" /> A: {labelA} (peak {formatBytes(Math.max(...a.y))}){' '}
        <span className="key b" /> B: {labelB} (peak {formatBytes(Math.max(...b.y))}) · aligned on{' '}
        <select aria-label="align" value={align} onChange={(e) => setAlign(e.target.value as Align)}>
          <option value="start">each trace's start</option>
          <option value="step" disabled={!canStep}>
            each one's first step marker{canStep ? '' : ' (none recorded)'}
          </option>
        </select>
      </p>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label="allocated memory, A and B on one axis"
        data-axis={a.axis}
        data-align={align}
        data-x0={x0}
        data-x1={x1}
      >
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={PAD.left} x2={W - PAD.right} y1={py(top * f)} y2={py(top * f)} className="grid-line" />
            <text x={PAD.left - 6} y={py(top * f) + 4} textAnchor="end">
              {formatBytes(top * f)}
            </text>
          </g>
        ))}
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <text key={f} x={px(x0 + f * (x1 - x0))} y={H - 10} textAnchor="middle">
            {tick(x0 + f * (x1 - x0))}
          </text>
        ))}
        <polyline className="curve a" points={path(a, sa)} data-points={a.x.length} fill="none" />
        <polyline className="curve b" points={path(b, sb)} data-points={b.x.length} fill="none" />
      </svg>
    </section>
  );
}
