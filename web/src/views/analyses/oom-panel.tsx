import { listName } from '../../../../src/engine/analyses/fragmentation/fragmentation.js';
import type { OomReport } from '../../../../src/engine/analyses/oom/oom.js';
import { formatCount } from '../../format.js';
import { Bytes, EntryLink, type Select } from './bits.js';

/** `memlens oom`: each oom entry's verdict, the arithmetic behind it, the free lists and what would help. */
export function OomPanel({ ooms, select }: { ooms: OomReport[]; select: Select }) {
  if (ooms.length === 0)
    return (
      <section aria-label="oom">
        <p>no oom entry in the trace (memlens oom --capacity and --request check the dump-time state)</p>
      </section>
    );
  return (
    <section aria-label="oom">
      {ooms.map((r) => (
        <div key={r.entry} className="oom">
          <p>
            {r.entry < 0 ? (
              'dump-time state'
            ) : (
              <>
                oom at trace <EntryLink k={r.entry} select={select} />
              </>
            )}
            : <strong className="verdict">{r.verdict}</strong>
            {!r.exact_free_blocks && ' (free blocks estimated from the trace)'}
          </p>
          <ul className="plain">
            {r.explanation.map((e) => (
              <li key={e}>{e}</li>
            ))}
            {r.free_lists.map((g) => (
              <li key={listName(g)}>
                free in the {listName(g)} list: <Bytes n={g.free_bytes} /> in {formatCount(g.free_blocks)}{' '}
                blocks, the largest <Bytes n={g.largest_free_block} />
                {g.stream === r.stream && " (the request's stream)"}
              </li>
            ))}
            {r.settings.map((s) => (
              <li key={s}>would help: {s}</li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
