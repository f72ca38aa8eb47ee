import { withSizes } from '../../model/allocations.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { endFigures, runningTotals } from '../../model/totals.js';

/**
 * One CUDA stream's share of a device, shaped as the device itself so the timeline's level of
 * detail, picking and offsets work on it unchanged: other streams' allocations keep their place
 * in the stacking order with zero height (drawn nowhere, never picked), and the running totals
 * are rebuilt from the dump-time state of that stream's segments with only its entries counted.
 */
export function streamView(s: Snapshot, d: DeviceModel, stream: number): DeviceModel {
  const t = d.trace;
  const index = s.traceColumns.streams.indexOf(stream);
  const size = t.size.map((v, i) => (t.stream[i] === index ? v : Number.NaN));
  const segments = s.tables.segments.filter((g) => g.stream === stream);
  const totals = runningTotals({ ...t, size }, endFigures({ ...s.tables, segments }, d.device));
  const a = d.allocations;
  const mine = allocationStreams(s, d);
  const sizes = a.size.map((v, id) => (mine[id] === stream ? v : 0));
  return {
    device: d.device,
    trace: d.trace,
    facts: d.facts,
    totals,
    allocations: withSizes(a, sizes),
    live: d.live,
    allocationFacts: a.facts,
    segmentIds: d.segmentIds,
  };
}

/** Raw stream of each allocation: its trace entry's, or its segment's when only the dump shows it. */
export function allocationStreams(s: Snapshot, d: DeviceModel): Float64Array {
  const a = d.allocations;
  const streams = s.traceColumns.streams;
  return Float64Array.from({ length: a.count }, (_, id) => streams[a.stream[id]!]!);
}

/** The streams a device's trace or segments use, ascending. */
export function deviceStreams(s: Snapshot, d: DeviceModel): number[] {
  // Flags per stream code, not a raw value per allocation: one pass over a Uint16 column.
  const used = new Uint8Array(s.traceColumns.streams.length);
  const codes = d.allocations.stream;
  for (let id = 0; id < d.allocations.count; id++) used[codes[id]!] = 1;
  return flaggedStreams(s, d, used);
}

/** The raw streams whose codes are flagged in `used`, and those of the device's segments, ascending. */
export function flaggedStreams(s: Snapshot, d: DeviceModel, used: Uint8Array): number[] {
  const seen = new Set<number>();
  for (let code = 0; code < used.length; code++)
    if (used[code] === 1) seen.add(s.traceColumns.streams[code]!);
  for (const id of d.segmentIds) seen.add(s.tables.segments[id]!.stream);
  return [...seen].sort((x, y) => x - y);
}
