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
  if (!hasHistory(d)) out.unshift(warning(noHistoryText(s, d), `memlens summary ${file}`));
  return out;
}

function noHistoryText(s: Snapshot, d: DeviceModel): string {
  const markers =
    d.trace.length > 0 ? ` (the trace holds only ${plural(d.trace.length, 'snapshot marker')})` : '';
  const dumpOnly = `Dump only: no trace recorded${markers}, so the file shows the memory held at the dump, not how it got there, nor any OOM`;
  // Blocks carry stacks only while memory is being recorded: then the advice to turn recording on
  // would be wrong. Only state was recorded, or the trace's window saw nothing (memlens record
  // clears it at each step: python/memlens/_record.py _cut), or recording was turned off before
  // the dump (CUDACachingAllocator recordHistory clears the trace when disabled).
  if (blocksCarryStacks(s, d))
    return `${dumpOnly}. Its blocks carry allocation stacks, so memory was being recorded: as state only (enabled="state"; record "all" for a trace), with a trace that nothing entered since it was last cleared (memlens record clears it at each step), or with recording turned off before the dump, which clears the trace (dump before _record_memory_history(enabled=None)).`;
  return `${dumpOnly} (record with torch.cuda.memory._record_memory_history()).`;
}

function blocksCarryStacks(s: Snapshot, d: DeviceModel): boolean {
  const { segments, blocks } = s.tables;
  for (const id of d.segmentIds) {
    const seg = segments[id]!;
    for (let b = seg.firstBlock; b < seg.firstBlock + seg.blockCount; b++)
      if (blocks.stack[b]! >= 0) return true;
  }
  return false;
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
