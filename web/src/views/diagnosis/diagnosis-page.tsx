import { useState } from 'react';
import type { WindowCycle } from '../../../../src/engine/analyses/cycles/index.js';
import type { DeviceDiagnosis, DiagnosisSoFar } from '../../../../src/engine/analyses/diagnosis/index.js';
import type { ViewState } from '../../url-state.js';
import type { EngineClient } from '../../worker/client.js';
import { selectIn } from '../analyses-page.js';
import { FindingCard } from './finding-card.js';
import { findingLink } from './finding-link.js';
import { OtherDevices } from './other-devices.js';
import { useDiagnosis } from './use-diagnosis.js';
import './diagnosis.css';

interface Props {
  client: EngineClient;
  device: number;
  /** The device's name (npu:N for a torch_npu file, cuda:N otherwise). */
  label: string;
  file: string;
  update: (patch: Partial<ViewState>) => void;
  /** The served run's recorded cycles of this snapshot's window (memlens record --cycles). */
  cycles?: WindowCycle[];
}

/** The commands name the file as a terminal in its folder would. */
export function commandName(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

/** The diagnosis query's arguments, the same wherever it is asked, so the worker computes it once. */
export function diagnosisArgs(file: string, cycles: WindowCycle[], capacity: number | null = null) {
  return {
    file: commandName(file),
    ...(cycles.length > 0 ? { cycles } : {}),
    ...(capacity !== null ? { capacity } : {}),
  };
}

/**
 * Where the app opens: `memlens diagnose`'s findings for the device, computed in the worker by the
 * same engine call, the worst first, each linked to the view that proves it; beneath, what the
 * file's other devices showed. Findings show as each analysis answers, ranked with those known so
 * far, under a line naming what is still being looked at.
 */
export function DiagnosisPage({ client, device, file, update, cycles = [] }: Props) {
  const [capacity, setCapacity] = useState<number | null>(null);
  const answer = useDiagnosis(client, diagnosisArgs(file, cycles, capacity));
  if (answer.status === 'loading') return <p className="hint">diagnosing…</p>;
  if (answer.status === 'error') return <p className="error">{answer.message}</p>;
  const r = answer.value.devices.find((d) => d.device === device);
  if (r === undefined) return <p className="error">no device {device} in this file</p>;
  return <Findings r={r} file={answer.value} update={update} onCapacity={setCapacity} />;
}

function Findings({
  r,
  file,
  update,
  onCapacity,
}: {
  r: DeviceDiagnosis;
  file: DiagnosisSoFar;
  update: (patch: Partial<ViewState>) => void;
  onCapacity: (bytes: number) => void;
}) {
  const select = selectIn(update);
  const problems = r.findings.filter((f) => f.kind !== 'peak' && f.kind !== 'warning');
  const peak = r.findings.filter((f) => f.kind === 'peak');
  const notes = r.findings.filter((f) => f.kind === 'warning');
  const card = (f: DeviceDiagnosis['findings'][number], i: number, lead: boolean) => (
    <FindingCard
      key={i}
      f={f}
      lead={lead}
      link={findingLink(f.show, select, update)}
      memory={r.memory}
      onCapacity={onCapacity}
    />
  );
  const checked = r.checked.length > 0 && (
    <section className={`checked${problems.length === 0 ? ' clean' : ''}`} aria-label="checked">
      <h2>
        {problems.length > 0
          ? 'Also checked, nothing found'
          : file.pending.length > 0
            ? 'Checked so far, nothing found'
            : `✓ No problem found on ${r.label}`}
      </h2>
      <ul>
        {r.checked.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
    </section>
  );
  const others = (
    <OtherDevices
      file={file}
      device={r.device}
      onDevice={(device) => update({ device, entry: null, alloc: null })}
    />
  );
  return (
    <main className="diagnosis" aria-label="diagnosis" aria-busy={file.pending.length > 0}>
      <h1>What happened to the memory of {r.label}</h1>
      {file.pending.length > 0 && (
        <p className="hint still-looking" role="status">
          still looking at: {file.pending.join(', ')}…
        </p>
      )}
      {problems.length === 0 && others}
      {problems.length === 0 && checked}
      {problems.map((f, i) => card(f, i, i === 0))}
      {problems.length > 0 && others}
      {problems.length > 0 && checked}
      {peak.map((f, i) => card(f, i, false))}
      {notes.length > 0 && (
        <section className="notes" aria-label="what the file cannot tell">
          <h2>What this file cannot tell</h2>
          <ul>
            {notes.map((f) => (
              <li key={f.headline}>
                {f.headline} <code>{f.command}</code>
              </li>
            ))}
          </ul>
        </section>
      )}
    </main>
  );
}
