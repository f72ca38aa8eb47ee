/**
 * What the file holds that memlens keeps but does not model: actions, keys and values from
 * PyTorch versions, vendor builds (torch_npu, torch_mlu, ...) or tools newer than memlens. They are
 * named in the summary's warnings so a figure that leaves them out never looks complete by silence.
 */
import { formatBytes } from '../../base/format.js';
import { BlockState } from '../../model/segments.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { KNOWN_ACTIONS } from '../../model/trace-columns.js';
import { keysNotCarried } from '../slice/slice-dicts.js';

const KNOWN_POOLS = new Set(['large', 'small']);

/** File-wide: trace entry keys, segment/block keys and segment types memlens does not read. */
export function unmodelledFileWarnings(s: Snapshot): string[] {
  const out: string[] = [];
  const entryKeys = extraKeyCounts(s);
  if (entryKeys.size > 0) {
    const list = [...entryKeys].map(([k, n]) => `${k} (${counted(n, 'entry', 'entries')})`).join(', ');
    out.push(`trace entry keys memlens does not read: ${list}; kept as written, used by no figure.`);
  }
  const notCarried = keysNotCarried(s);
  if (notCarried.length > 0)
    out.push(`segment/block keys memlens does not read: ${notCarried.join(', ')}; used by no figure.`);
  const pools = [...new Set(s.tables.segments.map((g) => g.pool))].filter((p) => !KNOWN_POOLS.has(p));
  if (pools.length > 0)
    out.push(
      `segment_type memlens does not know: ${pools.join(', ')}; such segments count in reserved and in the large pool's trace figures.`,
    );
  return out;
}

/** Per device: trace actions and block states memlens does not know, with how much they hold. */
export function unmodelledDeviceWarnings(s: Snapshot, d: DeviceModel): string[] {
  const out: string[] = [];
  const actions = unknownActionCounts(s, d);
  if (actions.size > 0) {
    const n = [...actions.values()].reduce((a, b) => a + b, 0);
    const list = [...actions].map(([name, k]) => `${name} (${k})`).join(', ');
    out.push(
      `${counted(n, 'trace entry has', 'trace entries have')} an action memlens does not know: ${list}; listed in trace_actions, changing no total.`,
    );
  }
  const states = unknownStateBlocks(s, d);
  if (states.count > 0)
    out.push(
      `${counted(states.count, 'block', 'blocks')} (${formatBytes(states.bytes)}) ${states.count === 1 ? 'has' : 'have'} a state memlens does not know (${s.tables.unknownStates.join(', ')}): counted in reserved only.`,
    );
  return out;
}

function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function extraKeyCounts(s: Snapshot): Map<string, number> {
  const counts = new Map<string, number>();
  for (const extra of s.traceColumns.extras.values())
    for (const k of Object.keys(extra)) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

function unknownActionCounts(s: Snapshot, d: DeviceModel): Map<string, number> {
  const counts = new Map<string, number>();
  const names = s.traceColumns.actionNames;
  d.facts.actionCounts.forEach((n, a) => {
    if (a >= KNOWN_ACTIONS.length && n > 0) counts.set(names[a] ?? 'missing', n);
  });
  return counts;
}

function unknownStateBlocks(s: Snapshot, d: DeviceModel): { count: number; bytes: number } {
  const { blocks, segments } = s.tables;
  let count = 0;
  let bytes = 0;
  for (const id of d.segmentIds) {
    const seg = segments[id]!;
    for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
      if (blocks.state[k] !== BlockState.unknown) continue;
      count++;
      bytes += blocks.size[k]!;
    }
  }
  return { count, bytes };
}
