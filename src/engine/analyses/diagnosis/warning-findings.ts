import { plural } from '../../base/format.js';
import { hasHistory } from '../../derived/state/has-history.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { summaryWarnings } from '../summary/summary.js';
import type { Finding } from './finding.js';

/**
 * What the file cannot tell: the summary's warnings (ring-buffer overflow, blocks and frees from
 * before recording, missing entries), and a file with no trace at all, whose findings are the
 * dump's state alone.
 */
export function warningFindings(s: Snapshot, d: DeviceModel, file: string): Finding[] {
  const out = summaryWarnings(s, d).map((text) => warning(capitalized(text), `memlens summary ${file}`));
  // A trace of snapshot markers only records no allocation either: no OOM, leak or burst can show.
  if (!hasHistory(d)) {
    const markers =
      d.trace.length > 0 ? ` (the trace holds only ${plural(d.trace.length, 'snapshot marker')})` : '';
    out.unshift(
      warning(
        `Dump only: no trace recorded${markers}, so the file shows the memory held at the dump, not how it got there, nor any OOM (record with torch.cuda.memory._record_memory_history()).`,
        `memlens summary ${file}`,
      ),
    );
  }
  return out;
}

export function warning(headline: string, command: string): Finding {
  return {
    kind: 'warning',
    headline,
    evidence: [],
    frames: [],
    figures: {},
    command,
    show: { view: 'overview' },
    severity: 'note',
    stake_bytes: 0,
  };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
