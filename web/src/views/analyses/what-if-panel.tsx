import { type FormEvent, useEffect, useState } from 'react';
import { parseByteText } from '../../../../src/engine/base/index.js';
import type { DeviceSimulation } from '../../../../src/engine/simulate/index.js';
import {
  applyConf,
  DEFAULT_TORCH_VERSION,
  defaultSettings,
  howFar,
  type ReplaySummary,
  rankReplays,
} from '../../../../src/engine/simulate/index.js';
import { formatBytes, formatCount } from '../../format.js';
import type { EngineClient } from '../../worker/client.js';
import type { WhatIfArgs } from '../../worker/what-if-protocol.js';
import { useWords } from '../producer-words.js';
import { Bytes, EntryLink, type Select, Table } from './bits.js';
import { FormAnswer } from './form-answer.js';
import { TextField } from './text-field.js';
import { useQuery } from './use-query.js';

interface Props {
  client: EngineClient;
  device: number;
  /** The settings string in the URL; the panel runs it when opened. */
  set: string;
  onSet: (set: string) => void;
  select: Select;
}

/** Versions whose allocator rules the simulator knows (allocator-spec §8 starts at 2.1). */
const TORCH_VERSIONS = Array.from({ length: 11 }, (_, i) => `2.${i + 1}`);

/**
 * `memlens simulate` in the page: the recorded requests replayed under the recorded settings and
 * under the settings typed here, side by side, and the sweep's ranking. The worker runs the
 * replays; the settings are checked here as they are typed, by the CLI's parser.
 */
export function WhatIfPanel({ client, device, set, onSet, select }: Props) {
  const [draft, setDraft] = useState({ set, capacity: '', torchVersion: DEFAULT_TORCH_VERSION });
  const [applied, setApplied] = useState<Omit<WhatIfArgs, 'device'>>({
    set,
    capacity: null,
    torchVersion: DEFAULT_TORCH_VERSION,
  });
  const problem = inputProblem(draft);
  const run = (e: FormEvent) => {
    e.preventDefault();
    if (problem !== null) return;
    setApplied({ set: draft.set, capacity: capacityOf(draft.capacity), torchVersion: draft.torchVersion });
    onSet(draft.set.trim());
  };
  const answer = useQuery(client, 'whatIf', { device, ...applied });
  return (
    <section aria-label="what-if">
      <form className="what-if-form" onSubmit={run}>
        <TextField
          label="settings"
          name="settings to try"
          size={48}
          placeholder="expandable_segments:True,max_split_size_mb:256"
          value={draft.set}
          onChange={(set) => setDraft({ ...draft, set })}
        />
        <TextField
          label="capacity"
          name="capacity"
          size={12}
          placeholder="from the oom"
          title="device memory the allocator may use, e.g. 80 GiB; empty: from an oom entry, else unlimited"
          value={draft.capacity}
          onChange={(capacity) => setDraft({ ...draft, capacity })}
        />
        <label>
          PyTorch{' '}
          <select
            aria-label="torch version"
            value={draft.torchVersion}
            onChange={(e) => setDraft({ ...draft, torchVersion: e.target.value })}
          >
            {TORCH_VERSIONS.map((v) => (
              <option key={v}>{v}</option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={problem !== null}>
          simulate
        </button>
      </form>
      <FormAnswer problem={problem} answer={answer} busy="simulating…">
        {(d) => <Comparison d={d} select={select} />}
      </FormAnswer>
      <Sweep client={client} device={device} args={applied} />
    </section>
  );
}

function capacityOf(text: string): number | null {
  return text.trim() === '' ? null : parseByteText(text);
}

/** The CLI's own refusal of the settings (or of a capacity the page cannot read), else null. */
function inputProblem(d: { set: string; capacity: string; torchVersion: string }): string | null {
  if (d.capacity.trim() !== '' && parseByteText(d.capacity) === null)
    return `capacity ${d.capacity}: expected bytes, like 80 GiB or 85899345920`;
  try {
    applyConf(defaultSettings(d.torchVersion), d.set);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

const ROWS: [string, (r: ReplaySummary) => string][] = [
  ['settings', (r) => r.settings || '(defaults)'],
  ['peak reserved', (r) => formatBytes(r.peak_reserved_completed_bytes)],
  ['peak allocated', (r) => formatBytes(r.peak_allocated_bytes)],
  [
    'fragmentation at the allocated peak',
    (r) => `${formatBytes(r.fragmentation_at_peak_bytes)} (${r.fragmentation_at_peak_percent}%)`,
  ],
  [
    'fragmentation at the OOM',
    (r) => (r.fragmentation_at_oom_bytes === null ? '—' : formatBytes(r.fragmentation_at_oom_bytes)),
  ],
  ['cudaMalloc / cudaFree', (r) => `${formatCount(r.cuda_malloc_calls)} / ${formatCount(r.cuda_free_calls)}`],
];

/** Exact bytes on hover for the rows that are sizes. */
const TITLES: Record<string, (r: ReplaySummary) => number> = {
  'peak reserved': (r) => r.peak_reserved_completed_bytes,
  'peak allocated': (r) => r.peak_allocated_bytes,
  'fragmentation at the allocated peak': (r) => r.fragmentation_at_peak_bytes,
  'fragmentation at the OOM': (r) => r.fragmentation_at_oom_bytes ?? 0,
};

function capacitySource(d: DeviceSimulation): string {
  if (d.capacity_source === 'option') return 'as given';
  if (d.capacity_source === 'oom') return 'reserved + device_free at the oom';
  return `the reserved peak recorded after entry ${formatCount(d.capacity_peak_entry)}; reserved + device_free at the oom was only ${formatBytes(d.capacity_at_oom_bytes ?? 0)}: memory held outside PyTorch grew`;
}

function Comparison({ d, select }: { d: DeviceSimulation; select: Select }) {
  const w = useWords();
  const runs: [string, ReplaySummary][] = [['recorded settings', d.recorded]];
  if (d.what_if !== null) runs.push(['what if', d.what_if]);
  const f = d.fidelity;
  return (
    <div className="what-if">
      <p>
        {formatCount(d.trace_entries)} trace entries replayed,{' '}
        {d.capacity_bytes === null ? (
          'unlimited capacity (no oom in the trace; give a capacity)'
        ) : (
          <>
            capacity <Bytes n={d.capacity_bytes} /> ({capacitySource(d)})
          </>
        )}
      </p>
      <p className="hint">
        fragmentation: reserved − allocated when allocated memory peaked (what the cache held unused when the
        program needed the most), and when the first OOM was raised
      </p>
      <Table head={['', ...runs.map(([name]) => name)]}>
        {ROWS.map(([label, text]) => (
          <tr key={label}>
            <th scope="row">{w(label)}</th>
            {runs.map(([name, r]) => (
              <td key={name} title={TITLES[label] && `${formatCount(TITLES[label](r))} bytes`}>
                {text(r)}
              </td>
            ))}
          </tr>
        ))}
        <tr>
          <th scope="row">OOM</th>
          {runs.map(([name, r]) => (
            <td key={name} data-oom={r.oom} className={r.oom ? 'bad' : undefined}>
              {r.oom ? (
                <>
                  yes, {r.ooms} (first at <EntryLink k={r.first_oom_entry} select={select} /> of{' '}
                  {formatCount(r.trace_entries)})
                </>
              ) : (
                `no: all ${formatCount(r.trace_entries)} entries`
              )}
            </td>
          ))}
        </tr>
      </Table>
      {f.segment_events_matched_percent < 100 && (
        <p className="hint">
          fidelity of the recorded settings: {f.matched_segment_events}/{f.recorded_segment_events} recorded
          segment events reproduced ({f.segment_events_matched_percent.toFixed(1)}%,{' '}
          {f.simulated_segment_events} simulated), reserved bytes off by at most{' '}
          <Bytes n={f.max_reserved_deviation_bytes} />
        </p>
      )}
    </div>
  );
}

type SweepState =
  | { status: 'idle' }
  | { status: 'running'; done: number; total: number }
  | { status: 'ready'; runs: ReplaySummary[] }
  | { status: 'error'; message: string };

/**
 * The sweep's runs, asked one message each so the worker keeps answering the other views and the
 * page shows how far it got. A new capacity or version drops a sweep in progress and runs it again.
 */
function Sweep({
  client,
  device,
  args,
}: {
  client: EngineClient;
  device: number;
  args: Omit<WhatIfArgs, 'device'>;
}) {
  const [state, setState] = useState<SweepState>({ status: 'idle' });
  const [started, setStarted] = useState(0);
  const key = `${device}:${args.capacity}:${args.torchVersion}`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: key stands for the run's inputs
  useEffect(() => {
    setState({ status: 'idle' });
    if (started === 0) return;
    let live = true;
    (async () => {
      const plan = await client.query('sweepPlan', { torchVersion: args.torchVersion });
      const runs: ReplaySummary[] = [];
      for (let index = 0; index < plan.length && live; index++) {
        setState({ status: 'running', done: index, total: plan.length });
        const { capacity, torchVersion } = args;
        runs.push(await client.query('sweepRun', { device, index, capacity, torchVersion }));
      }
      if (live) setState({ status: 'ready', runs: rankReplays(runs) });
    })().catch((e: Error) => live && setState({ status: 'error', message: e.message }));
    return () => {
      live = false;
    };
  }, [client, key, started]);
  const w = useWords();
  const busy = state.status === 'running';
  return (
    <div className="sweep" aria-busy={busy}>
      <p>
        <button type="button" disabled={busy} onClick={() => setStarted((n) => n + 1)}>
          sweep
        </button>{' '}
        {busy ? (
          <>
            <span role="status">
              run {state.done + 1} of {state.total}…
            </span>{' '}
            <progress max={state.total} value={state.done} />
          </>
        ) : (
          <span className="hint">
            the standard settings (expandable segments, max_split_size_mb, roundup_power2_divisions), ranked:
            no OOM first, then the OOM that came latest; runs that got equally far by peak reserved over the
            entries they completed, then fewest {w('cudaMalloc')} calls
          </span>
        )}
      </p>
      {state.status === 'error' && <p className="error">{state.message}</p>}
      {state.status === 'ready' && <SweepTable runs={state.runs} />}
    </div>
  );
}

function SweepTable({ runs }: { runs: ReplaySummary[] }) {
  const w = useWords();
  return (
    <Table
      head={['#', 'settings', 'got to entry', 'peak reserved', 'frag. at peak', w('cudaMalloc'), 'OOMs']}
    >
      {runs.map((r, i) => (
        <tr key={r.settings} aria-label={`sweep rank ${i + 1}`}>
          <td className="num">{i + 1}</td>
          <td>{r.settings || '(defaults)'}</td>
          <td className={r.oom ? 'bad' : undefined}>{howFar(r)}</td>
          <td className="num">
            <Bytes n={r.peak_reserved_completed_bytes} />
          </td>
          <td className="num">{r.fragmentation_at_peak_percent}%</td>
          <td className="num">{formatCount(r.cuda_malloc_calls)}</td>
          <td className="num">{formatCount(r.ooms)}</td>
        </tr>
      ))}
    </Table>
  );
}
