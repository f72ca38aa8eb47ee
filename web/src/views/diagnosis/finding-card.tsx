import type { Finding, FindingKind } from '../../../../src/engine/analyses/diagnosis/index.js';
import { type DeviceMemory, stakeText } from '../../../../src/engine/analyses/diagnosis/index.js';
import { Frames } from '../analyses/bits.js';
import type { FindingLink } from './finding-link.js';
import { OomReadings } from './oom-readings.js';

const LABEL: Record<FindingKind, string> = {
  oom: 'Out of memory',
  leak: 'Leak',
  gc: 'GC burst',
  fragmentation: 'Fragmentation',
  peak: 'Peak',
  warning: 'Note',
};

/** Whose stack a finding shows. */
const STACK_OF: Partial<Record<FindingKind, string>> = {
  oom: 'The failing request, from',
  leak: 'Allocated at',
  gc: 'Allocated at',
  peak: 'Largest site',
};

/**
 * One finding: its kind, the headline (the answer, large), the evidence behind it, the stack it
 * is about, and the link into the view that proves it, with the CLI command that prints it.
 */
export function FindingCard({
  f,
  lead,
  link,
  memory,
  onCapacity,
}: {
  f: Finding;
  lead: boolean;
  link: FindingLink;
  memory: DeviceMemory;
  /** The GPU's total memory, given to decide an OOM the file alone cannot judge. */
  onCapacity: (bytes: number) => void;
}) {
  const stake = stakeText(f, memory);
  // The readings have their own block: their lines are not repeated among the evidence.
  const read = new Set((f.readings ?? []).map((r) => `if ${r.if}: ${r.says}`));
  const evidence = f.evidence.filter((e) => !read.has(e));
  return (
    <article className={`finding ${f.kind}${lead ? ' lead' : ''}`} aria-label={LABEL[f.kind]}>
      <span className="kind">{LABEL[f.kind]}</span>
      {stake !== '' && <span className="stake">{stake}</span>}
      <h2 className="headline">{f.headline}</h2>
      {f.readings && f.readings.length > 0 && <OomReadings readings={f.readings} onCapacity={onCapacity} />}
      {evidence.length > 0 && (
        <ul className="evidence">
          {evidence.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
      {f.frames.length > 0 && STACK_OF[f.kind] !== undefined && (
        <div className="site">
          <span className="dim">{STACK_OF[f.kind]}</span>
          <Frames frames={f.frames.map((x) => ({ ...x, extra: undefined }))} />
        </div>
      )}
      <p className="actions">
        <button type="button" className="go" onClick={link.go}>
          {link.label} →
        </button>
        <code title="the same detail in the terminal">{f.command}</code>
      </p>
    </article>
  );
}
