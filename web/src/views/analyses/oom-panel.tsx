import { type FormEvent, useState } from 'react';
import { listName } from '../../../../src/engine/analyses/fragmentation/index.js';
import type { OomReport } from '../../../../src/engine/analyses/oom/index.js';
import { parseByteText } from '../../../../src/engine/base/index.js';
import { formatFrame } from '../../../../src/engine/derived/index.js';
import { formatCount } from '../../format.js';
import type { EngineClient } from '../../worker/client.js';
import { useWords } from '../producer-words.js';
import { Bytes, EntryLink, Frames, type Select, Table } from './bits.js';
import { FormAnswer } from './form-answer.js';
import { TextField } from './text-field.js';
import { useQuery } from './use-query.js';

interface Props {
  client: EngineClient;
  device: number;
  /** The open file's name, for the `memlens simulate` lines. */
  file: string | null;
  select: Select;
}

interface Sizes {
  capacity: number | null;
  request: number | null;
}

/**
 * `memlens oom` in the page: each oom entry's verdict with its arithmetic, the failing request's
 * stack, what held memory then, the free lists, and what would help with the replay that tests it.
 * The GPU's total memory (`--capacity`) is a field: without it the file cannot always tell a small
 * GPU filled by PyTorch from a large one filled by something else.
 */
export function OomPanel({ client, device, file, select }: Props) {
  const w = useWords();
  const [draft, setDraft] = useState({ capacity: '', request: '' });
  const [applied, setApplied] = useState<Sizes>({ capacity: null, request: null });
  const problem = sizeProblem('capacity', draft.capacity) ?? sizeProblem('request', draft.request);
  const apply = (e: FormEvent) => {
    e.preventDefault();
    if (problem !== null) return;
    setApplied({ capacity: sizeOf(draft.capacity), request: sizeOf(draft.request) });
  };
  const answer = useQuery(client, 'oom', { device, ...applied });
  return (
    <section aria-label="oom">
      <form className="what-if-form" onSubmit={apply}>
        <TextField
          label={w('GPU total memory')}
          name="capacity"
          size={12}
          placeholder="e.g. 80 GiB"
          title={w("the GPU's total memory (memlens oom --capacity): measures what was held outside PyTorch")}
          value={draft.capacity}
          onChange={(capacity) => setDraft({ ...draft, capacity })}
        />
        <TextField
          label="request"
          name="request"
          size={10}
          placeholder="no oom: size"
          title="with no oom in the trace: check the dump-time state against a request of this size (memlens oom --request)"
          value={draft.request}
          onChange={(request) => setDraft({ ...draft, request })}
        />
        <button type="submit" disabled={problem !== null}>
          judge
        </button>
      </form>
      <FormAnswer problem={problem} answer={answer} busy="judging…">
        {(ooms) => <Reports ooms={ooms} file={file} select={select} />}
      </FormAnswer>
    </section>
  );
}

function sizeOf(text: string): number | null {
  return text.trim() === '' ? null : parseByteText(text);
}

function sizeProblem(name: string, text: string): string | null {
  if (text.trim() === '' || parseByteText(text) !== null) return null;
  return `${name} ${text}: expected a size, like 80 GiB, 512MiB or 85899345920`;
}

function Reports({ ooms, file, select }: { ooms: OomReport[]; file: string | null; select: Select }) {
  const w = useWords();
  if (ooms.length === 0)
    return (
      <p>
        {w(
          "no oom entry in the trace; give the GPU's total memory (and a request) to check the dump-time state",
        )}
      </p>
    );
  return (
    <>
      {ooms.map((r) => (
        <Report key={r.entry} r={r} file={file} select={select} />
      ))}
    </>
  );
}

function Report({ r, file, select }: { r: OomReport; file: string | null; select: Select }) {
  const name = file ?? 'FILE';
  const hidden = r.stack_frames - r.stack.length - r.stack_inner.length;
  return (
    <div className="oom" data-verdict={r.verdict}>
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
      <p className="headline">
        <strong>{r.headline}</strong>
      </p>
      <ul className="plain explanation">
        {r.explanation.map((e) => (
          <li key={e}>{e}</li>
        ))}
      </ul>
      {r.entry >= 0 && (
        <div className="oom-stack">
          <h4>
            the failing request's stack (your code first
            {hidden > 0 && `; ${formatCount(hidden)} frames of PyTorch's machinery left out`})
          </h4>
          <Frames frames={r.stack} shown={8} />
          {r.stack_inner.length > 0 && (
            <p className="stack-inner">
              which called:{' '}
              {r.stack_inner
                .slice(0, 3)
                .map((f) => formatFrame(f))
                .join(' ← ')}
            </p>
          )}
        </div>
      )}
      <Held r={r} />
      <ul className="plain">
        {r.free_lists.map((g) => (
          <li key={listName(g)}>
            free in the {listName(g)} list: <Bytes n={g.free_bytes} /> in {formatCount(g.free_blocks)} blocks,
            the largest <Bytes n={g.largest_free_block} />
            {g.stream === r.stream && " (the request's stream)"}
          </li>
        ))}
      </ul>
      {r.suggestions.length > 0 && (
        <div className="suggestions">
          <h4>would help</h4>
          <ul className="plain">
            {r.suggestions.map((s) => (
              <li key={s.why}>
                {s.setting !== null && <strong>{s.setting}</strong>}
                {s.setting !== null && ' — '}
                {s.why}
                {s.simulate !== '' && (
                  <div>
                    test it: <code>{`memlens simulate ${name} ${s.simulate}`}</code>
                  </div>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/** What held memory at the failure, as `memlens peak --at ENTRY` and `memlens categories` show it. */
function Held({ r }: { r: OomReport }) {
  const h = r.held;
  if (h.live_allocations === 0) return null;
  return (
    <div className="held">
      <h4>
        held then: <Bytes n={h.live_bytes} /> in {formatCount(h.live_allocations)} live allocations
        {h.after_entry >= 0 && ` (memlens peak --at ${formatCount(h.after_entry)})`}
      </h4>
      <p>
        by category:{' '}
        {h.categories.map((c, i) => (
          <span key={c.category}>
            {i > 0 && ', '}
            {c.category} <Bytes n={c.bytes} />
          </span>
        ))}
      </p>
      <Table head={['bytes', 'count', 'allocated at']}>
        {h.sites.map((g, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: sites are listed once, largest first
          <tr key={i} className="site">
            <td className="num">
              <Bytes n={g.bytes} />
            </td>
            <td className="num">{formatCount(g.count)}</td>
            <td>
              <Frames frames={g.frames} shown={2} />
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
