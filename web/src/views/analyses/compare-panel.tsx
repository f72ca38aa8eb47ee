import { useEffect, useState } from 'react';
import type { DeviceDiff, MomentDiff, SnapshotDiff } from '../../../../src/engine/analyses/diff/index.js';
import { formatBytes, formatCount } from '../../format.js';
import { type ServedFile, servedFiles, sourceOf } from '../../served-files.js';
import type { EngineClient } from '../../worker/client.js';
import { sourceKey } from '../../worker/other-snapshot.js';
import type { Source } from '../../worker/protocol.js';
import { Bytes, EntryLink, Frames, type Select, Table } from './bits.js';

interface Props {
  client: EngineClient;
  device: number;
  /** The open file (A). */
  file: string | null;
  /** The served file compared with it (B), from the URL. */
  compare: string | null;
  onCompare: (name: string | null) => void;
  select: Select;
}

type DiffState =
  | { status: 'idle' }
  | { status: 'loading'; bytes: number; total: number | null }
  | { status: 'ready'; diff: SnapshotDiff }
  | { status: 'error'; message: string };

/**
 * `memlens diff A B` in the page: the open file is A, a second served file (another rank or step)
 * or a file opened here is B. The worker loads B beside A and runs the same diff.
 */
export function ComparePanel({ client, device, file, compare, onCompare, select }: Props) {
  const [files, setFiles] = useState<ServedFile[]>([]);
  const [local, setLocal] = useState<File | null>(null);
  useEffect(() => {
    servedFiles().then(setFiles);
  }, []);
  const served = files.find((f) => f.name === compare);
  const source: Source | null =
    local !== null ? { file: local, name: local.name } : served !== undefined ? sourceOf(served) : null;
  const others = files.filter((f) => f.name !== file);
  return (
    <section aria-label="compare">
      <p className="compare-form">
        {others.length > 0 && (
          <label>
            compare with (B){' '}
            <select
              aria-label="file to compare"
              value={local === null ? (compare ?? '') : ''}
              onChange={(e) => {
                setLocal(null);
                onCompare(e.target.value === '' ? null : e.target.value);
              }}
            >
              <option value="">choose a file…</option>
              {others.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.label || f.name}
                </option>
              ))}
            </select>
          </label>
        )}{' '}
        <label>
          {others.length > 0 ? 'or open a file' : 'compare with (B): open a file'}{' '}
          <input
            type="file"
            aria-label="open a file to compare"
            accept=".pickle,.json,.gz"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) {
                setLocal(f);
                onCompare(null);
              }
            }}
          />
        </label>
      </p>
      <SiteDiff client={client} device={device} file={file} source={source} select={select} />
    </section>
  );
}

/** The diff of the open file (A) with B, whichever way B was chosen (the form above, a Run page pair). */
export function SiteDiff({
  client,
  device,
  file,
  source,
  select,
}: {
  client: EngineClient;
  device: number;
  file: string | null;
  source: Source | null;
  select: Select;
}) {
  const [fullStacks, setFullStacks] = useState(false);
  const state = useDiff(client, device, source, fullStacks);
  return (
    <>
      <p className="compare-form">
        <label>
          <input type="checkbox" checked={fullStacks} onChange={(e) => setFullStacks(e.target.checked)} />{' '}
          full stacks
        </label>
      </p>
      {source !== null && (
        <p className="dim">
          A: {file} · B: {source.name} (differences are B − A)
        </p>
      )}
      <DiffBody state={state} select={select} />
    </>
  );
}

/** Asks the worker for the diff, with B's decoding progress while it loads. */
function useDiff(
  client: EngineClient,
  device: number,
  source: Source | null,
  fullStacks: boolean,
): DiffState {
  const [state, setState] = useState<DiffState>({ status: 'idle' });
  const key = source === null ? '' : sourceKey(source);
  // biome-ignore lint/correctness/useExhaustiveDependencies: key stands for the source
  useEffect(() => {
    if (source === null) {
      setState({ status: 'idle' });
      return;
    }
    let live = true;
    setState({ status: 'loading', bytes: 0, total: null });
    client
      .query('compare', { device, other: source, top: 10, fullStacks }, (bytes, total) => {
        if (live) setState({ status: 'loading', bytes, total });
      })
      .then(
        (diff) => live && setState({ status: 'ready', diff }),
        (e: Error) => live && setState({ status: 'error', message: `${source.name}: ${e.message}` }),
      );
    return () => {
      live = false;
    };
  }, [client, device, key, fullStacks]);
  return state;
}

function DiffBody({ state, select }: { state: DiffState; select: Select }) {
  switch (state.status) {
    case 'idle':
      return <p className="hint">choose a second file (another rank or step) to compare with this one</p>;
    case 'loading':
      return (
        <p className="hint" role="status">
          {state.bytes > 0 ? `decoding B: ${formatBytes(state.bytes)}` : 'comparing…'}
          {state.total ? ` of ${formatBytes(state.total)}` : ''}
        </p>
      );
    case 'error':
      return (
        <p className="error" role="alert">
          {state.message}
        </p>
      );
    case 'ready':
      return (
        <>
          {state.diff.devices.map((d) => (
            <DeviceDiffView key={d.device} d={d} select={select} />
          ))}
          {state.diff.devices.length === 0 && <p>no device of B pairs with this device</p>}
          {state.diff.unmatched.b.map((d) => (
            <p key={d.device}>{d.label} is only in B</p>
          ))}
        </>
      );
  }
}

function DeviceDiffView({ d, select }: { d: DeviceDiff; select: Select }) {
  return (
    <div className="diff">
      <h3>{d.label === d.label_b ? d.label : `${d.label} (A) vs ${d.label_b} (B)`}</h3>
      <ul className="plain">
        {d.explanation.map((e) => (
          <li key={e}>{e}</li>
        ))}
      </ul>
      <h4>totals (B − A)</h4>
      <Table head={['A', 'B', 'B − A', 'figure']}>
        {d.totals
          .filter((t) => t.a !== 0 || t.b !== 0)
          .map((t) => (
            <tr key={t.metric}>
              <td className="num">
                <Figure n={t.a} unit={t.unit} />
              </td>
              <td className="num">
                <Figure n={t.b} unit={t.unit} />
              </td>
              <td className="num">
                <Figure n={t.delta} unit={t.unit} signed />
              </td>
              <td>{t.metric}</td>
            </tr>
          ))}
      </Table>
      <Moment title="live at dump time" m={d.at_dump} select={select} />
      <Moment title="live at each file's allocated peak" m={d.at_peak} select={select} />
    </div>
  );
}

function Figure({ n, unit, signed = false }: { n: number; unit: 'bytes' | 'count'; signed?: boolean }) {
  const plus = signed && n > 0 ? '+' : '';
  if (unit === 'count') return <>{`${plus}${formatCount(n)}`}</>;
  return <span title={`${plus}${formatCount(n)} bytes`}>{`${plus}${formatBytes(n)}`}</span>;
}

function Moment({ title, m, select }: { title: string; m: MomentDiff; select: Select }) {
  return (
    <section className="moment" aria-label={title}>
      <h4>
        {title} (A after <EntryLink k={m.a_after_entry} select={select} />, B after entry{' '}
        {formatCount(m.b_after_entry)}): A <Bytes n={m.a_bytes} />, B <Bytes n={m.b_bytes} />, B − A{' '}
        <Figure n={m.delta_bytes} unit="bytes" signed />
      </h4>
      {m.sites.length === 0 ? (
        <p>no site differs.</p>
      ) : (
        <Table head={['A', 'B', 'B − A', 'count A / B', 'allocated at (innermost first)']}>
          {m.sites.map((s, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: sites are ranked; position is the identity
            <tr key={i} className="site">
              <td className="num">
                <Bytes n={s.a_bytes} />
              </td>
              <td className="num">
                <Bytes n={s.b_bytes} />
              </td>
              <td className="num" data-bytes={s.delta_bytes}>
                <Figure n={s.delta_bytes} unit="bytes" signed />
              </td>
              <td className="num">
                {formatCount(s.a_count)} / {formatCount(s.b_count)}
              </td>
              <td>
                <Frames frames={s.frames} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      {m.other_sites > 0 && (
        <p className="dim">
          … {formatCount(m.other_sites)} more sites differ (net{' '}
          <Figure n={m.other_delta_bytes} unit="bytes" signed />)
        </p>
      )}
    </section>
  );
}
