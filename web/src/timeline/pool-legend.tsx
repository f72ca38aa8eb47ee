import type { PoolGroup } from '../../../src/engine/analyses/pool-envelopes.js';
import { envelopeTone } from './paint-layer.js';

/** The pools timeline's key: each (pool, stream) group's colours, stacked bottom first as drawn. */
export function PoolLegend({ groups, name }: { groups: PoolGroup[]; name: (g: PoolGroup) => string }) {
  return (
    <ul className="pool-legend" aria-label="pools legend">
      {groups.map((g, i) => (
        <li key={name(g)}>
          <span className="swatch" style={{ background: envelopeTone(2 * i) }} title="allocated" />
          <span
            className="swatch"
            style={{ background: envelopeTone(2 * i + 1) }}
            title="reserved, not allocated"
          />
          {name(g)}
        </li>
      ))}
      <li className="muted">strong: allocated · pale: reserved by that pool and stream only</li>
    </ul>
  );
}
