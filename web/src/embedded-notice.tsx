import { embeddedReport } from './embedded-data.js';
import { formatBytes } from './format.js';

/**
 * On a `memlens report` page of a run: the snapshots the report left out (over its byte budget,
 * or undecodable), named with their size and why, so a missing cell is never a silent gap.
 */
export function EmbeddedNotice() {
  const omitted = embeddedReport()?.manifest.omitted ?? [];
  if (omitted.length === 0) return null;
  return (
    <details open={omitted.length <= 5} className="hint embedded-omitted" aria-label="omitted snapshots">
      <summary>
        {omitted.length === 1 ? '1 snapshot is' : `${omitted.length} snapshots are`} not in this report (its
        cells are on the Run page but do not open)
      </summary>
      <ul>
        {omitted.map((o) => (
          <li key={o.name}>
            {o.label ? `${o.label} — ` : ''}
            {o.name} ({formatBytes(o.size)}): {o.reason}
          </li>
        ))}
      </ul>
    </details>
  );
}
