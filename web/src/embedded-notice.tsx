import type { ReportManifest } from '../../src/wire/report-manifest.js';
import { embeddedReport } from './embedded-data.js';
import { formatBytes } from './format.js';

type Omitted = ReportManifest['omitted'][number];

/** How the notice's summary names what is missing, by kind. */
const SUMMARY: Record<Omitted['kind'], (n: number) => string> = {
  snapshot: (n) =>
    `${n === 1 ? '1 snapshot is' : `${n} snapshots are`} not in this report (its cells are on the Run page but do not open)`,
  cycle: (n) =>
    `${n === 1 ? '1 recorded cycle is' : `${n} recorded cycles are`} not in this report (the Cycles tab lists the rest)`,
};

/**
 * On a `memlens report` page of a run: the snapshots and recorded cycles the report left out
 * (over its byte budget, or undecodable), named with their size and why, so a missing cell or
 * cycle is never a silent gap. One list per kind.
 */
export function EmbeddedNotice() {
  const omitted = embeddedReport()?.manifest.omitted ?? [];
  return (Object.keys(SUMMARY) as Omitted['kind'][]).map((kind) => {
    // A report written before cycles were carried has no kind: its omissions are snapshots.
    const list = omitted.filter((o) => (o.kind ?? 'snapshot') === kind);
    if (list.length === 0) return null;
    return (
      <details
        key={kind}
        open={list.length <= 5}
        className="hint embedded-omitted"
        aria-label={`omitted ${kind}s`}
      >
        <summary>{SUMMARY[kind](list.length)}</summary>
        <ul>
          {list.map((o) => (
            <li key={o.name}>
              {o.label ? `${o.label} — ` : ''}
              {o.name} ({formatBytes(o.size)}): {o.reason}
            </li>
          ))}
        </ul>
      </details>
    );
  });
}
