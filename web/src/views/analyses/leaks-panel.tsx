import { type FormEvent, useState } from 'react';
import type { DeviceLeaks, Unreleased } from '../../../../src/engine/analyses/leaks/index.js';
import { leakIterationsSpan, leakKind } from '../../../../src/engine/analyses/leaks/index.js';
import { parseRangeText, plural } from '../../../../src/engine/base/index.js';
import type { IterationSummary, SiteGroup } from '../../../../src/engine/derived/index.js';
import { formatCount } from '../../format.js';
import type { EngineClient } from '../../worker/client.js';
import { AllocLink, BlocksThrough, Bytes, EntryLink, Frames, type Select, Table } from './bits.js';
import { TextField } from './text-field.js';
import { useQuery } from './use-query.js';

interface Given {
  marker: string | null;
  range: [number, number] | null;
}

/**
 * `memlens leaks` in the page, with its --marker and --range as fields: leaks are judged per
 * iteration, and when the file marks none the user can say what starts a step, or ask what a
 * window of entries left allocated.
 */
export function LeaksPanel({
  client,
  device,
  select,
}: {
  client: EngineClient;
  device: number;
  select: Select;
}) {
  const [draft, setDraft] = useState({ marker: '', range: '' });
  const [given, setGiven] = useState<Given>({ marker: null, range: null });
  const problem =
    draft.range.trim() === '' || parseRangeText(draft.range) !== null
      ? null
      : `range ${draft.range}: expected entries A:B as printed, like 20,047:30,000 (either side may be left out)`;
  const apply = (e: FormEvent) => {
    e.preventDefault();
    if (problem !== null) return;
    setGiven({
      marker: draft.marker.trim() === '' ? null : draft.marker.trim(),
      range: draft.range.trim() === '' ? null : parseRangeText(draft.range),
    });
  };
  const answer = useQuery(client, 'leaks', { device, ...given });
  return (
    <section aria-label="leaks">
      <form className="what-if-form" onSubmit={apply}>
        <TextField
          label="iteration marker"
          name="marker"
          size={18}
          placeholder="e.g. ProfilerStep# or train_step"
          title="what starts an iteration: a record_function name prefix, or a function called once per step (memlens leaks --marker)"
          value={draft.marker}
          onChange={(marker) => setDraft({ ...draft, marker })}
        />
        <TextField
          label="entries"
          name="range"
          size={18}
          placeholder="A:B, e.g. 1,000:5,000"
          title="what these trace entries allocated and still held after the last (memlens leaks --range)"
          value={draft.range}
          onChange={(range) => setDraft({ ...draft, range })}
        />
        <button type="submit" disabled={problem !== null}>
          judge
        </button>
      </form>
      {problem !== null && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {answer.status === 'loading' && <p className="hint">computing…</p>}
      {answer.status === 'error' && (
        <p className="error" role="alert">
          {answer.message}
        </p>
      )}
      {answer.status === 'ready' && <Leaks r={answer.value} select={select} />}
    </section>
  );
}

function Leaks({ r, select }: { r: DeviceLeaks; select: Select }) {
  return (
    <>
      <Header iterations={r.iterations} verdict={r.verdict} select={select} />
      {r.iterations.count === 0 && !r.no_trace && (
        <p className="hint give-iterations">
          to judge leaks, say what marks a step in <em>iteration marker</em> above (a record_function name
          prefix, or a function called once per step), or give <em>entries</em> A:B to see what that window
          left allocated.
        </p>
      )}
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
          {r.other_groups > 0 && <p className="dim">… {plural(r.other_groups, 'more site')}</p>}
        </>
      )}
      {r.unreleased && <UnreleasedPart u={r.unreleased} select={select} />}
    </>
  );
}

/** What the given window of entries allocated and still held at its end (the CLI's --range). */
function UnreleasedPart({ u, select }: { u: Unreleased; select: Select }) {
  if (u.from_entry > u.to_entry) return <p>entries: no trace entry falls in the window</p>;
  return (
    <div className="unreleased">
      <p>
        from <EntryLink k={u.from_entry} select={select} /> to <EntryLink k={u.to_entry} select={select} />:{' '}
        <strong>
          {plural(u.count, 'allocation')}, <Bytes n={u.bytes} />
        </strong>{' '}
        made there and still allocated at its end
      </p>
      {u.groups.length > 0 && <SiteGroupsTable groups={u.groups} select={select} />}
      {u.other_groups > 0 && (
        <p className="dim">
          … {plural(u.other_groups, 'more site')} hold <Bytes n={u.other_bytes} />
        </p>
      )}
    </div>
  );
}

/** Allocating sites with their bytes and counts, each linked to the Blocks table through its frame. */
export function SiteGroupsTable({ groups, select }: { groups: SiteGroup[]; select: Select }) {
  return (
    <Table head={['bytes', 'count', 'allocated at (innermost first)']}>
      {groups.map((g, i) => (
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
          it.tried.length === 0 ? (
            `none (${it.marker})`
          ) : (
            <>
              none found; tried:
              <ul className="plain tried">
                {it.tried.map((t) => (
                  <li key={t}>{t}</li>
                ))}
              </ul>
            </>
          )
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
