import { useState } from 'react';
import { formatDuration, formatStream } from '../../../src/engine/base/index.js';
import type { AllocationDetails, DetailFrame } from '../../../src/engine/derived/index.js';
import { frameWhere, shortName } from '../../../src/engine/derived/index.js';
import { exactBytes, formatBytes, formatCount, hex } from '../format.js';

/** The pinned allocation: sizes, address, stream, lifetime, its entries, and the whole stack. */
export function Details({
  details: d,
  onEntry,
}: {
  details: (AllocationDetails & { offset: number }) | null;
  onEntry: (k: number) => void;
}) {
  if (d === null)
    return (
      <aside className="details" aria-label="allocation details">
        <h3>Allocation</h3>
        <p className="hint">
          Click an allocation in the timeline or a block in the pool state to pin it here.
        </p>
      </aside>
    );
  const entry = (k: number | null, missing: string) =>
    k === null ? (
      missing
    ) : k < 0 ? (
      'before the recorded window'
    ) : (
      <button type="button" className="link" onClick={() => onEntry(k)}>
        entry {formatCount(k)}
      </button>
    );
  return (
    <aside className="details" aria-label="allocation details" data-alloc={d.id}>
      <h3>Allocation #{d.id}</h3>
      <table>
        <tbody>
          <Row k="requested size" v={<span title={exactBytes(d.size)}>{formatBytes(d.size)}</span>} />
          <Row
            k="block size"
            v={
              d.block_size === null ? (
                'not in the dump (freed before it)'
              ) : (
                <span title={exactBytes(d.block_size)}>{formatBytes(d.block_size)}</span>
              )
            }
          />
          <Row k="address" v={hex(d.address)} />
          <Row k="stream" v={formatStream(d.stream)} />
          <Row
            k="pool"
            v={`${d.pool}${d.private_pool === null ? '' : `, private pool (${d.private_pool.join(', ')})`}${d.pool_exact ? '' : ' (by size: the block is not in the dump)'}`}
          />
          <Row k="allocated" v={entry(d.alloc_entry, '—')} />
          <Row k="free requested" v={entry(d.free_requested_entry, 'not freed')} />
          <Row k="free completed" v={entry(d.free_completed_entry, 'alive at dump')} />
          <Row
            k="lifetime"
            v={
              d.lifetime_entries === null
                ? 'began before the recorded window'
                : `${formatCount(d.lifetime_entries)} entries${d.lifetime_us === null ? '' : `, ${formatDuration(d.lifetime_us)}`}`
            }
          />
          <Row k="state at dump" v={d.state_at_dump} />
          {d.user_metadata !== null && <Row k="user metadata" v={d.user_metadata} />}
          {d.compile_context !== null && <Row k="compile context" v={d.compile_context} />}
        </tbody>
      </table>
      <Stack d={d} />
    </aside>
  );
}

function Row({ k, v }: { k: string; v: React.ReactNode }) {
  return (
    <tr>
      <th>{k}</th>
      <td>{v}</td>
    </tr>
  );
}

/**
 * The stack, the user's code first: from the innermost frame of their code outwards, then what
 * that frame called (the library and operator) folded; the recorder, allocator, dispatcher and
 * interpreter frames only with "full stack", which lists every frame as recorded.
 */
function Stack({ d }: { d: AllocationDetails }) {
  const [full, setFull] = useState(false);
  if (d.full_frames.length === 0) return <p className="hint">no frames recorded for this allocation</p>;
  const first = d.frames[0];
  const order = full
    ? 'every recorded frame, innermost first'
    : first?.user
      ? 'your code first, then its callers'
      : 'no frame of your code; innermost first';
  const hidden =
    !full && d.hidden_frames > 0
      ? ` · ${d.hidden_frames} recorder, allocator, dispatcher and interpreter frames hidden`
      : '';
  return (
    <>
      <h4 className="stack-head">
        Stack
        <label className="full-stack">
          <input type="checkbox" checked={full} onChange={(e) => setFull(e.target.checked)} /> full stack
        </label>
      </h4>
      <p className="hint">
        {order}
        {hidden}
      </p>
      <FrameList frames={full ? d.full_frames : d.frames} />
      {!full && d.inner_frames.length > 0 && first !== undefined && (
        <details className="inner-frames">
          <summary>
            inside {first.name} ({frameWhere(first)}): {d.inner_frames.length} library and operator frame
            {d.inner_frames.length === 1 ? '' : 's'}, innermost {shortName(d.inner_frames[0]!.name)}
          </summary>
          <FrameList frames={d.inner_frames} />
        </details>
      )}
    </>
  );
}

function FrameList({ frames }: { frames: DetailFrame[] }) {
  return (
    <ol className="stack">
      {frames.map((f, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a stack can repeat a frame; position is its identity
        <li key={i} className={f.kind} data-kind={f.kind} title={`${f.name}\n${f.filename}:${f.line}`}>
          <span className="fn">{shortName(f.name)}</span> <span className="loc">{frameWhere(f)}</span>
        </li>
      ))}
    </ol>
  );
}
