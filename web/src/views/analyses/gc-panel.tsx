import type { DeviceGc, GcBurst } from '../../../../src/engine/analyses/gc/gc-bursts.js';
import { burstLivedText } from '../../../../src/engine/analyses/gc/gc-words.js';
import { formatDuration } from '../../../../src/engine/format.js';
import { formatCount } from '../../format.js';
import { BlocksThrough, Bytes, EntryLink, Frames, type Select, Table } from './bits.js';
import { Header } from './leaks-panel.js';

/** `memlens gc`: bursts of frees of long-lived allocations, each linked to its first entry. */
export function GcPanel({ r, select }: { r: DeviceGc; select: Select }) {
  return (
    <section aria-label="gc bursts">
      <Header iterations={r.iterations} verdict={r.verdict} select={select} />
      {r.bursts.map((b) => (
        <Burst key={b.entry} b={b} select={select} />
      ))}
    </section>
  );
}

function Burst({ b, select }: { b: GcBurst; select: Select }) {
  const freed = b.free_frames[0];
  return (
    <div className="burst">
      <p>
        burst at <EntryLink k={b.entry} select={select} /> (
        <button
          type="button"
          className="link"
          data-events={`${b.entry}..${b.last_entry}`}
          title="the Events table on the burst's entries"
          onClick={() => select.eventsIn(b.entry, b.last_entry)}
        >
          entries {formatCount(b.entry)}–{formatCount(b.last_entry)}
        </button>
        ){b.time_us !== null && `, time_us ${b.time_us}`}
        {b.iteration_name !== null && `, in ${b.iteration_name}`}:{' '}
        <strong>
          {formatCount(b.count)} allocations, <Bytes n={b.bytes} />
        </strong>{' '}
        freed{b.duration_us !== null && ` within ${formatDuration(b.duration_us)}`}
      </p>
      <p className="indent">
        {formatCount(b.long_lived)} long-lived; they had lived {burstLivedText(b)}
      </p>
      <p className="indent">
        freed at {freed ? `${freed.name} (${freed.filename}:${freed.line})` : 'a site with no stack'}
        {b.through_gc && <span className="warn"> — through the garbage collector (gc)</span>}
      </p>
      <Table head={['bytes', 'count', 'allocated at (innermost first)']}>
        {b.groups.map((g, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: groups are ranked; rank is the identity
          <tr key={i}>
            <td className="num">
              <Bytes n={g.bytes} />
            </td>
            <td className="num">{formatCount(g.count)}</td>
            <td>
              <Frames frames={g.frames} />
              <BlocksThrough frames={g.frames} select={select} />
            </td>
          </tr>
        ))}
      </Table>
      {b.other_groups > 0 && <p className="dim indent">… {formatCount(b.other_groups)} more sites</p>}
    </div>
  );
}
