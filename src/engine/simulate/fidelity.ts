/**
 * How closely a replay under the recorded settings reproduces the recording: the segment events
 * (same actions and sizes in the same order; addresses may differ), the reserved-bytes curve, and
 * the dump-time segments with their block structure.
 */

import { BlockState } from '../model/segments.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';
import type { EventLog } from './event-log.js';
import type { Replay } from './replay.js';
import { blockStateOf, segmentViews } from './segment-views.js';

export interface SegmentEventRef {
  action: string;
  size_bytes: number;
  entry: number;
}

export interface Fidelity {
  recorded_segment_events: number;
  simulated_segment_events: number;
  matched_segment_events: number;
  /** matched / max(recorded, simulated), 100 when both are empty. */
  segment_events_matched_percent: number;
  first_mismatch: { recorded: SegmentEventRef | null; simulated: SegmentEventRef | null } | null;
  max_reserved_deviation_bytes: number;
  max_deviation_entry: number;
  recorded_final_segments: number;
  simulated_final_segments: number;
  matched_final_segments: number;
}

const SEGMENT_ACTIONS = new Set<number>([
  Action.segment_alloc,
  Action.segment_free,
  Action.segment_map,
  Action.segment_unmap,
]);
const NAMES = ['segment_alloc', 'segment_free', 'segment_map', 'segment_unmap'];

interface Seq {
  action: number[];
  size: number[];
  entry: number[];
}

export function fidelityOf(s: Snapshot, d: DeviceModel, r: Replay): Fidelity {
  const rec = recordedSegmentEvents(d);
  const sim = simulatedSegmentEvents(r.allocator.log);
  const { matched, mismatch } = align(rec, sim);
  const most = Math.max(rec.action.length, sim.action.length);
  const finals = finalSegments(s, d, r);
  return {
    recorded_segment_events: rec.action.length,
    simulated_segment_events: sim.action.length,
    matched_segment_events: matched,
    segment_events_matched_percent: most === 0 ? 100 : (100 * matched) / most,
    first_mismatch: mismatch,
    max_reserved_deviation_bytes: r.maxReservedDeviation,
    max_deviation_entry: r.maxDeviationEntry,
    recorded_final_segments: finals.recorded,
    simulated_final_segments: finals.simulated,
    matched_final_segments: finals.matched,
  };
}

function recordedSegmentEvents(d: DeviceModel): Seq {
  const out: Seq = { action: [], size: [], entry: [] };
  const t = d.trace;
  for (let i = 0; i < t.length; i++) {
    if (!SEGMENT_ACTIONS.has(t.action[i]!)) continue;
    out.action.push(t.action[i]!);
    out.size.push(t.size[i]!);
    out.entry.push(i);
  }
  return out;
}

function simulatedSegmentEvents(log: EventLog): Seq {
  const out: Seq = { action: [], size: [], entry: [] };
  for (let i = 0; i < log.length; i++) {
    if (!SEGMENT_ACTIONS.has(log.action[i]!)) continue;
    out.action.push(log.action[i]!);
    out.size.push(log.size[i]!);
    out.entry.push(log.entry[i]!);
  }
  return out;
}

/**
 * In-order matching: equal events pair up; at a difference, the nearer resynchronisation point
 * (looking a bounded distance ahead in either sequence) is taken, so one extra or missing event
 * costs one match, not the rest of the trace.
 */
function align(rec: Seq, sim: Seq): { matched: number; mismatch: Fidelity['first_mismatch'] } {
  const same = (i: number, j: number): boolean =>
    rec.action[i] === sim.action[j] && rec.size[i] === sim.size[j];
  const ref = (q: Seq, k: number): SegmentEventRef | null =>
    k < q.action.length
      ? { action: NAMES[q.action[k]! - Action.segment_alloc]!, size_bytes: q.size[k]!, entry: q.entry[k]! }
      : null;
  let i = 0;
  let j = 0;
  let matched = 0;
  let mismatch: Fidelity['first_mismatch'] = null;
  const LOOKAHEAD = 64;
  while (i < rec.action.length && j < sim.action.length) {
    if (same(i, j)) {
      matched++;
      i++;
      j++;
      continue;
    }
    mismatch ??= { recorded: ref(rec, i), simulated: ref(sim, j) };
    let skipSim = -1;
    let skipRec = -1;
    for (let k = 1; k <= LOOKAHEAD && (skipSim < 0 || skipRec < 0); k++) {
      if (skipSim < 0 && j + k < sim.action.length && same(i, j + k)) skipSim = k;
      if (skipRec < 0 && i + k < rec.action.length && same(i + k, j)) skipRec = k;
    }
    if (skipSim > 0 && (skipRec < 0 || skipSim <= skipRec)) j += skipSim;
    else if (skipRec > 0) i += skipRec;
    else {
      i++;
      j++;
    }
  }
  if (mismatch === null && (i < rec.action.length || j < sim.action.length)) {
    mismatch = { recorded: ref(rec, i), simulated: ref(sim, j) };
  }
  return { matched, mismatch };
}

/** Dump-time segments against the simulation's final ones, by size, pool kind and blocks. */
function finalSegments(
  s: Snapshot,
  d: DeviceModel,
  r: Replay,
): { recorded: number; simulated: number; matched: number } {
  const counts = new Map<string, number>();
  for (const id of d.segmentIds) {
    const seg = s.tables.segments[id]!;
    const b = s.tables.blocks;
    const blocks: string[] = [];
    for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
      const st = comparedState(b.state[k]!);
      blocks.push(`${b.size[k]}:${st}`);
    }
    const key = `${seg.expandable}|${seg.pool === 'small'}|${seg.totalSize}|${blocks.join(',')}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const a = r.allocator;
  const views = segmentViews(a);
  let matched = 0;
  for (const v of views) {
    const blocks = v.blocks.map((b) => `${a.blocks.size[b]}:${blockStateOf(a, b)}`);
    const key = `${v.expandable}|${(v.pool & 1) === 1}|${v.size}|${blocks.join(',')}`;
    const c = counts.get(key) ?? 0;
    if (c > 0) {
      matched++;
      counts.set(key, c - 1);
    }
  }
  return { recorded: d.segmentIds.length, simulated: views.length, matched };
}

/** A dump state as the simulator can have it: its workspace block is one it holds taken (start-state.ts). */
function comparedState(state: BlockState): BlockState {
  if (state === BlockState.unknown) return BlockState.inactive;
  if (state === BlockState.workspace) return BlockState.allocated;
  return state;
}
