import type { IterationSummary } from '../../../../src/engine/analyses/iterations/iterations.js';
import { leakIterationsSpan, leakKind } from '../../../../src/engine/analyses/leaks/leak-words.js';
import type { DeviceLeaks } from '../../../../src/engine/analyses/leaks/leaks.js';
import { formatCount } from '../../format.js';
import { AllocLink, BlocksThrough, Bytes, EntryLink, Frames, type Select, Table } from './bits.js';

/** `memlens leaks`: the iterations used, the verdict, and the sites whose allocations outlived their iteration. */
export function LeaksPanel({ r, select }: { r: DeviceLeaks; select: Select }) {
  return (
    <section aria-label="leaks">
      <Header iterations={r.iterations} verdict={r.verdict} select={select} />
      {r.allocated_growth_bytes_per_iteration !== null && (
        <p>
          allocated memory at the end of each iteration changes by{' '}
          <Bytes n={r.allocated_growth_bytes_per_iteration} /> per iteration (fitted)
        </p>
      )}
      {r.groups.length > 0 && (
        <>
          <p>allocations still allocated after the next iteration ended, by allocating site:</p>
          <Table
            head={[
              '',
              'held',
              'count',
              'per iter.',
              'iterations',
              'oldest, newest held',
              'allocated at (innermost first)',
            ]}
          >
            {r.groups.map((g, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: groups are ranked; rank is the identity
              <tr key={i} className={g.accumulating ? 'leak' : undefined}>
                <td>{leakKind(g)}</td>
                <td className="num">
                  <Bytes n={g.held_bytes} />
                </td>
                <td className="num">{formatCount(g.held_count)}</td>
                <td className="num">{g.accumulating ? <Bytes n={g.bytes_per_iteration} /> : '—'}</td>
                <td>{leakIterationsSpan(g)}</td>
                <td>
                  {g.held_examples.map((h, j) => (
                    <span key={h.allocation}>
                      {j > 0 && ', '}
                      <AllocLink id={h.allocation} entry={h.entry} select={select} />
                    </span>
                  ))}
                </td>
                <td>
                  <Frames frames={g.frames} />
                  <BlocksThrough frames={g.frames} select={select} />
                </td>
              </tr>
            ))}
          </Table>
          {r.other_groups > 0 && <p className="dim">… {formatCount(r.other_groups)} more sites</p>}
        </>
      )}
    </section>
  );
}

/** The iterations an analysis used, linked to their first and last entries, and its verdict. */
export function Header({
  iterations: it,
  verdict,
  select,
}: {
  iterations: IterationSummary;
  verdict: string;
  select: Select;
}) {
  return (
    <>
      <p>
        iterations:{' '}
        {it.count === 0 ? (
          `none (${it.marker})`
        ) : (
          <>
            {formatCount(it.count)} from {it.marker} ({it.first_name}–{it.last_name},{' '}
            <EntryLink k={it.first_entry!} select={select} />–<EntryLink k={it.last_entry!} select={select} />
            , ~{formatCount(it.mean_entries!)} entries each)
          </>
        )}
      </p>
      <p className="verdict">{verdict}</p>
    </>
  );
}
