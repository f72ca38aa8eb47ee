import { formatStream } from '../../../src/engine/base/index.js';
import { freePartCode, type PoolGroup } from '../../../src/engine/views/pools/index.js';
import { envelopeTone } from './paint-layer.js';

interface Props {
  groups: PoolGroup[];
  /** The stream filter: other streams' groups are not stacked (null: all are). */
  stream: number | null;
  name: (g: PoolGroup) => string;
}

/**
 * The pools timeline's key: each (pool, stream) group's envelope colour, stacked bottom first as
 * drawn. Under a stream filter the groups of other streams are listed struck out, and a stream
 * with no group says why the plot is empty.
 */
export function PoolLegend({ groups, stream, name }: Props) {
  const shown = (g: PoolGroup) => stream === null || g.stream === stream;
  const none = groups.length > 0 && !groups.some(shown);
  return (
    <ul className="pool-legend" aria-label="pools legend">
      {groups.map((g, i) => (
        <li key={name(g)} data-shown={String(shown(g))} style={shown(g) ? undefined : HIDDEN}>
          <span className="swatch" style={{ background: envelopeTone(freePartCode(i)) }} />
          {name(g)}
        </li>
      ))}
      {none && (
        <li role="status">
          stream {formatStream(stream!)} holds no segment of its own on this device: no pool envelope to show
        </li>
      )}
      <li className="muted">
        each envelope: its allocations at the bottom, then (pale) memory reserved for that pool and stream
        only
        {stream === null ? '' : ` · stream ${formatStream(stream)} only (its segments and their allocations)`}
      </li>
    </ul>
  );
}

const HIDDEN = { opacity: 0.45, textDecoration: 'line-through' } as const;
