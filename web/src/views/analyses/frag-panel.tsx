import type { DeviceFragmentation, FragState } from '../../../../src/engine/analyses/fragmentation/index.js';
import {
  listName,
  nonReleasablePeakWords,
  SEGMENT_ALLOC_COLUMNS,
} from '../../../../src/engine/analyses/fragmentation/index.js';
import { formatCount, hex } from '../../format.js';
import { useWords } from '../producer-words.js';
import { Bytes, EntryLink, type Select, Table } from './bits.js';

/**
 * `memlens frag`: the free blocks at dump time and at the selected entry, and the segment_allocs.
 * The selected entry is the last one unless another is chosen, and when nothing changed memory
 * after it its state is the dump's (`exact`): that report is printed once, under both names.
 */
export function FragPanel({ r, select }: { r: DeviceFragmentation; select: Select }) {
  const m = r.most_cached;
  const same = r.at?.exact === true;
  return (
    <section aria-label="fragmentation">
      <State
        title={
          same
            ? `at dump time (exact), the same as after trace entry ${formatCount(r.at!.after_entry)}: nothing changed memory after it`
            : 'at dump time (exact)'
        }
        s={r.dump}
        select={select}
      />
      {r.at !== null && !same && (
        <State
          title={`after trace entry ${formatCount(r.at.after_entry)} (estimated from the trace)`}
          s={r.at}
          select={select}
        />
      )}
      {m !== null && (
        <p>
          most reserved-but-unallocated in the window: <Bytes n={m.reserved_minus_allocated_bytes} /> after{' '}
          <EntryLink k={m.after_entry} select={select} /> (reserved <Bytes n={m.reserved_bytes} />, allocated{' '}
          <Bytes n={m.allocated_bytes} />)
        </p>
      )}
      <NonReleasablePeak r={r} select={select} />
      <SegmentAllocs r={r} select={select} />
      {r.notes.map((n) => (
        <p key={n} className="dim">
          note: {n}
        </p>
      ))}
    </section>
  );
}

function State({ title, s, select }: { title: string; s: FragState; select: Select }) {
  return (
    <div className="frag-state">
      <h4>{title}</h4>
      <ul className="plain">
        {s.explanation.map((e) => (
          <li key={e}>{e}</li>
        ))}
      </ul>
      {s.free_lists.length > 0 && (
        <Table head={['free list', 'free blocks', 'free bytes', 'largest']}>
          {s.free_lists.map((g) => (
            <tr key={listName(g)}>
              <td>{listName(g)}</td>
              <td className="num">{formatCount(g.free_blocks)}</td>
              <td className="num">
                <Bytes n={g.free_bytes} />
              </td>
              <td className="num">
                <Bytes n={g.largest_free_block} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      {s.worst_segments.length > 0 && (
        <>
          <p>segments with the most free space:</p>
          <Table head={['address', 'pool', 'size', 'in use', 'free', 'gaps', 'largest gap']}>
            {s.worst_segments.map((g) => (
              <tr key={g.address}>
                <td>
                  <button
                    type="button"
                    className="link"
                    data-segment={g.address}
                    data-size={g.size}
                    title="show this segment in the pool state after this entry"
                    onClick={() => select.segment(g.address, s.after_entry)}
                  >
                    {hex(g.address)}
                  </button>
                  {g.expandable && ' (exp.)'}{' '}
                  <button
                    type="button"
                    className="link"
                    data-segment-blocks={g.address}
                    title="the Blocks table on the allocations made in this segment's address range"
                    onClick={() => select.blocksIn(g.address, g.address + g.size)}
                  >
                    blocks
                  </button>
                </td>
                <td>{g.private_pool === null ? g.pool : `${g.pool} ${g.private_pool}`}</td>
                {[g.size, g.used_bytes, g.gap_bytes].map((b, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: fixed columns
                  <td key={i} className="num">
                    <Bytes n={b} />
                  </td>
                ))}
                <td className="num">{formatCount(g.gap_count)}</td>
                <td className="num">
                  <Bytes n={g.max_gap} />
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </div>
  );
}

/** The CLI's sentence, with a link to the entry. */
function NonReleasablePeak({ r, select }: { r: DeviceFragmentation; select: Select }) {
  const p = r.non_releasable_peak;
  if (p === null) return null;
  if (p.inactive_split_bytes === 0)
    return <p>no non-releasable (inactive split) memory at any point of the window.</p>;
  return (
    <p>
      {nonReleasablePeakWords(p, r.curve[0]?.time_us ?? null)} <EntryLink k={p.after_entry} select={select} />
    </p>
  );
}

const TOP = 10;

function SegmentAllocs({ r, select }: { r: DeviceFragmentation; select: Select }) {
  const w = useWords();
  const n = r.segment_allocs.length;
  if (n === 0) return <p>no segment_alloc in the trace.</p>;
  const shown = [...r.segment_allocs]
    .sort((x, y) => y.reserved_minus_allocated_before_bytes - x.reserved_minus_allocated_before_bytes)
    .slice(0, TOP);
  return (
    <>
      <p>
        {formatCount(n)} segment_allocs ({w('cudaMalloc')}) in the trace; those with the most
        reserved-but-unallocated memory just before them:
      </p>
      <Table head={SEGMENT_ALLOC_COLUMNS}>
        {shown.map((m) => (
          <tr key={m.entry}>
            <td>
              <EntryLink k={m.entry} select={select} />
            </td>
            <td className="num">
              <Bytes n={m.segment_bytes} /> {m.pool}
            </td>
            <td className="num">{m.request_bytes === null ? '—' : <Bytes n={m.request_bytes} />}</td>
            <td className="num">
              <Bytes n={m.reserved_before_bytes} />
            </td>
            <td className="num">
              <Bytes n={m.reserved_minus_allocated_before_bytes} />
            </td>
            <td className="num">
              <Bytes n={m.inactive_split_before_bytes} />
            </td>
            <td className="num">
              {m.detail === null ? (
                '—'
              ) : (
                <>
                  <Bytes n={m.detail.same_list_free_bytes} /> (
                  <Bytes n={m.detail.same_list_largest_free_block} />)
                </>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <p className="dim">
        A segment_alloc with much free memory in its own list means no single free block was large enough:
        that memory was fragmented.
      </p>
    </>
  );
}
