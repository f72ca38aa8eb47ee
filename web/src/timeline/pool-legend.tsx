import { freePartCode, type PoolGroup } from '../../../src/engine/analyses/pool-envelopes.js';
import { envelopeTone } from './paint-layer.js';

/** The pools timeline's key: each (pool, stream) group's envelope colour, stacked bottom first as drawn. */
export function PoolLegend({ groups, name }: { groups: PoolGroup[]; name: (g: PoolGroup) => string }) {
  return (
    <ul className="pool-legend" aria-label="pools legend">
      {groups.map((g, i) => (
        <li key={name(g)}>
          <span className="swatch" style={{ background: envelopeTone(freePartCode(i)) }} />
          {name(g)}
        </li>
      ))}
      <li className="muted">
        each envelope: its allocations at the bottom, then (pale) memory reserved for that pool and stream
        only
      </li>
    </ul>
  );
}
