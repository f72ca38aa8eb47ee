import { formatBytes, formatStream, plural } from '../../base/format.js';
import { type PoolEnd, type WindowStats, windowStats } from '../../derived/state/trace-window.js';
import { deviceName, type Producer } from '../../model/producer.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';
import type { PyDict } from '../../values/py-values.js';
import { isNpu } from '../producer/wording.js';
import { type DumpState, dumpState, type PoolState } from './dump-state.js';
import { flaggedStreams } from './stream-view.js';
import { unmodelledDeviceWarnings, unmodelledFileWarnings } from './unmodelled.js';

/** One row of the memory_summary() table. null = the file cannot tell (see `note`). */
export interface SummaryRow {
  metric: string;
  pool: 'all' | 'large' | 'small';
  unit: 'bytes' | 'count';
  current: number;
  peak: number | null;
  allocated_total: number | null;
  freed_total: number | null;
}

/** The per-device figures defined in shared/corpus/README.md, under those names. */
export interface DeviceFigures {
  device: number;
  segments: number;
  expandable_segments: number;
  blocks: number;
  pools: Record<string, PoolFigures>;
  reserved_bytes: number;
  allocated_bytes: number;
  active_bytes: number;
  requested_bytes: number;
  inactive_split_bytes: number;
  largest_inactive_block: number;
  trace_entries: number;
  trace_actions: Record<string, number>;
  ooms: number;
  trace_span_us: number;
  trace_start_allocated_bytes: number;
  trace_peak_allocated_bytes: number;
  trace_start_reserved_bytes: number;
  trace_peak_reserved_bytes: number;
}

export interface PoolFigures {
  segments: number;
  reserved_bytes: number;
}

export interface DeviceSummary extends DeviceFigures {
  /** The device's name (deviceName: `npu:N` for torch_npu files, else `cuda:N`). */
  label: string;
  /** torch_npu's workspace blocks at the dump (reserved, no tensor's, not free for tensors). */
  workspace_bytes: number;
  trace_first_time_us: number | null;
  trace_last_time_us: number | null;
  streams: string[];
  private_pools: string[];
  memory_summary: SummaryRow[];
  notes: string[];
  warnings: string[];
}

export interface SnapshotSummary {
  layout: string;
  producer: Producer;
  pickle_protocol: number | null;
  allocator_settings: PyDict | null;
  annotations: number;
  devices: DeviceSummary[];
  warnings: string[];
}

export function summarize(s: Snapshot, devices: DeviceModel[] = s.devices): SnapshotSummary {
  return {
    layout: s.layout,
    producer: s.producer,
    pickle_protocol: s.protocol ?? null,
    allocator_settings: s.allocatorSettings ?? null,
    annotations: s.annotations.length,
    devices: devices.map((d) => summarizeDevice(s, d)),
    warnings: snapshotWarnings(s),
  };
}

/** Only the summary's warnings (the device's, then the file's): what the diagnosis cites of it. */
export function summaryWarnings(s: Snapshot, d: DeviceModel): string[] {
  return [...deviceWarnings(s, d), ...snapshotWarnings(s)];
}

function summarizeDevice(s: Snapshot, d: DeviceModel): DeviceSummary {
  const dump = dumpState(s.tables, d.segmentIds);
  const t = d.totals;
  const times = timeRange(d.trace.timeUs);
  const actions = countActions(s, d);
  return {
    device: d.device,
    label: deviceName(s.producer, d.device),
    workspace_bytes: dump.workspaceBytes,
    segments: dump.segments,
    expandable_segments: dump.expandableSegments,
    blocks: dump.blocks,
    pools: Object.fromEntries(
      Object.entries(dump.pools).map(([k, v]) => [
        k,
        { segments: v.segments, reserved_bytes: v.reservedBytes },
      ]),
    ),
    reserved_bytes: dump.reservedBytes,
    allocated_bytes: dump.allocatedBytes,
    active_bytes: dump.activeBytes,
    requested_bytes: dump.requestedBytes,
    inactive_split_bytes: dump.inactiveSplitBytes,
    largest_inactive_block: dump.largestInactiveBlock,
    trace_entries: d.trace.length,
    trace_actions: actions,
    ooms: actions.oom ?? 0,
    trace_span_us: times ? times[1] - times[0] : 0,
    trace_start_allocated_bytes: t.start.allocated,
    trace_peak_allocated_bytes: t.peak.allocated,
    trace_start_reserved_bytes: t.start.reserved,
    trace_peak_reserved_bytes: t.peak.reserved,
    trace_first_time_us: times ? times[0] : null,
    trace_last_time_us: times ? times[1] : null,
    streams: streamsOf(s, d),
    private_pools: dump.privatePools,
    memory_summary: summaryRows(s, d, dump),
    notes: deviceNotes(s, d),
    warnings: deviceWarnings(s, d),
  };
}

/** Entries per action as the file writes them (the workspace markers' entries counted under their own actions). */
function countActions(s: Snapshot, d: DeviceModel): Record<string, number> {
  const counts = d.facts.actionCounts;
  const names = s.traceColumns.actionNames;
  const present = [...counts.keys()].filter((a) => counts[a]! > 0);
  const out = new Map(present.map((a) => [names[a] ?? 'missing', counts[a]!] as const));
  for (const [name, n] of s.workspace.recoded.get(d.device) ?? []) {
    out.set(name, (out.get(name) ?? 0) + n);
    out.set('workspace_snapshot', out.get('workspace_snapshot')! - n);
  }
  return Object.fromEntries([...out].sort((x, y) => (x[0] < y[0] ? -1 : 1)));
}

/** The first and last recorded times (entries without time_us skipped). */
function timeRange(time: Float64Array): [number, number] | null {
  let first = 0;
  while (first < time.length && Number.isNaN(time[first]!)) first++;
  if (first === time.length) return null;
  let last = time.length - 1;
  while (Number.isNaN(time[last]!)) last--;
  return [time[first]!, time[last]!];
}

function streamsOf(s: Snapshot, d: DeviceModel): string[] {
  // Segment lists of PyTorch 1.x and torch_npu 5.0 write no stream: none is known, not stream 0.
  if (d.trace.length === 0 && !s.tables.segmentKeys.includes('stream')) return [];
  return flaggedStreams(s, d, d.facts.streamsUsed).map(formatStream);
}

function poolEnd(p: PoolState | undefined): PoolEnd {
  return {
    requestedBytes: p?.allocatedRequestedBytes ?? 0,
    allocations: p?.allocations ?? 0,
    reservedBytes: p?.reservedBytes ?? 0,
    segments: p?.segments ?? 0,
  };
}

function summaryRows(s: Snapshot, d: DeviceModel, dump: DumpState): SummaryRow[] {
  const w = windowStats(d.trace, s.tables, {
    large: poolEnd(dump.perPool.large),
    small: poolEnd(dump.perPool.small),
  });
  const rows: SummaryRow[] = [];
  const pools: Record<'all' | 'large' | 'small', { p: PoolState; w: WindowStats | null }> = {
    all: { p: totalPool(dump), w: null },
    large: { p: dump.perPool.large ?? emptyPoolState(), w: w.large },
    small: { p: dump.perPool.small ?? emptyPoolState(), w: w.small },
  };
  const all = d.totals;
  const metric = (
    name: string,
    unit: SummaryRow['unit'],
    cur: (p: PoolState) => number,
    win?: (w: WindowStats) => [number, number, number],
    allWin?: [number, number, number],
  ): void => {
    for (const pool of ['all', 'large', 'small'] as const) {
      const { p, w: pw } = pools[pool];
      const fig =
        pool === 'all'
          ? (allWin ?? (win ? sumWin(w.large, w.small, win) : null))
          : pw && win
            ? win(pw)
            : null;
      rows.push({
        metric: name,
        pool,
        unit,
        current: cur(p),
        peak: fig?.[0] ?? null,
        allocated_total: fig?.[1] ?? null,
        freed_total: fig?.[2] ?? null,
      });
    }
  };
  metric('Allocated memory', 'bytes', (p) => p.allocatedBytes);
  metric('Active memory', 'bytes', (p) => p.activeBytes);
  metric(
    'Requested memory',
    'bytes',
    (p) => p.allocatedRequestedBytes,
    (x) => [x.peakRequestedBytes, x.allocBytes, x.freedBytes],
    [all.peak.allocated, sum(w, 'allocBytes'), sum(w, 'freedBytes')],
  );
  metric(
    'GPU reserved memory',
    'bytes',
    (p) => p.reservedBytes,
    (x) => [x.peakReservedBytes, x.segmentAllocBytes, x.segmentFreedBytes],
    [all.peak.reserved, sum(w, 'segmentAllocBytes'), sum(w, 'segmentFreedBytes')],
  );
  metric('Non-releasable memory', 'bytes', (p) => p.inactiveSplitBytes);
  metric(
    'Allocations',
    'count',
    (p) => p.allocations,
    (x) => [x.peakAllocations, x.allocCount, x.freeCount],
    [all.peak.allocations, sum(w, 'allocCount'), sum(w, 'freeCount')],
  );
  metric('Active allocs', 'count', (p) => p.activeAllocations);
  metric(
    'GPU reserved segments',
    'count',
    (p) => p.segments,
    (x) => [x.peakSegments, x.segmentAllocCount, x.segmentFreeCount],
    [all.peak.segments, sum(w, 'segmentAllocCount'), sum(w, 'segmentFreeCount')],
  );
  metric('Non-releasable allocs', 'count', (p) => p.inactiveSplitBlocks);
  return rows;
}

function sum(w: { large: WindowStats; small: WindowStats }, k: keyof WindowStats): number {
  return w.large[k] + w.small[k];
}

function sumWin(
  a: WindowStats,
  b: WindowStats,
  f: (w: WindowStats) => [number, number, number],
): [number, number, number] {
  const x = f(a);
  const y = f(b);
  return [x[0] + y[0], x[1] + y[1], x[2] + y[2]];
}

function emptyPoolState(): PoolState {
  return {
    allocatedBytes: 0,
    activeBytes: 0,
    requestedBytes: 0,
    allocatedRequestedBytes: 0,
    reservedBytes: 0,
    inactiveSplitBytes: 0,
    allocations: 0,
    activeAllocations: 0,
    segments: 0,
    inactiveSplitBlocks: 0,
  };
}

function totalPool(dump: DumpState): PoolState {
  const t = emptyPoolState();
  for (const p of Object.values(dump.perPool)) {
    for (const k of Object.keys(t) as (keyof PoolState)[]) t[k] += p[k];
  }
  return t;
}

/** What the summary cannot know, said once per device. */
/**
 * A torch_npu dump with `OOM_SNAPSHOT_ENABLE=2` records state only: a ring buffer of one entry, the
 * `oom` (Ascend/pytorch, torch_npu/csrc/npu/memory_snapshot.cpp, `_record_memory_history`: "state"
 * keeps max_entries 1), after the workspace markers. Blocks without an alloc entry are its design.
 */
function stateOnlyOom(s: Snapshot, d: DeviceModel): boolean {
  const c = d.facts.actionCounts;
  return isNpu(s.producer) && c[Action.oom] === 1 && d.trace.length === 1 + c[Action.workspace_snapshot]!;
}

function deviceNotes(s: Snapshot, d: DeviceModel): string[] {
  const notes = [
    'Peak, Tot alloc and Tot freed cover the recorded trace window only, in the sizes the trace records (requested bytes; the trace has no rounded block sizes, so Allocated/Active memory show dump-time values only).',
    'cudaMalloc retries and peaks before recording began are not in the file.',
  ];
  if (d.trace.length === 0) notes.push('This device has no trace entries: only dump-time figures are known.');
  if (stateOnlyOom(s, d))
    notes.push(
      "A state-only OOM dump (torch_npu's OOM_SNAPSHOT_ENABLE=2): the trace holds just the oom entry, so the blocks alive have no alloc entry, only the stacks the dump gives them.",
    );
  return notes;
}

function deviceWarnings(s: Snapshot, d: DeviceModel): string[] {
  const f = d.allocationFacts;
  const out: string[] = [];
  const settings = s.allocatorSettings;
  if (settings?.trace_alloc_overflowed === true)
    out.push(
      'the trace ring buffer overflowed: the oldest entries were dropped (allocator_settings.trace_alloc_overflowed).',
    );
  if (f.orphanFrees > 0)
    out.push(
      `${f.orphanFrees} frees in the trace have no alloc in it (${formatBytes(f.orphanFreeBytes)}): the ring buffer dropped them, or recording started (or its history was last cleared, as memlens record clears it at each window) after they were made.`,
    );
  if (f.blocksBeforeRecording > 0 && d.trace.length > 0 && !stateOnlyOom(s, d))
    out.push(
      `${plural(f.blocksBeforeRecording, 'block')} alive at dump (${formatBytes(f.blocksBeforeRecordingBytes)} requested) were allocated before the trace begins: no alloc entry, and no stack unless the block has one.`,
    );
  if (f.unmatchedAllocs > 0)
    out.push(
      `${plural(f.unmatchedAllocs, 'allocation')} are never freed in the trace yet are not in the dump's segments: the file is inconsistent.`,
    );
  if (f.doubleAllocs > 0)
    out.push(`${plural(f.doubleAllocs, 'alloc')} reuse an address whose free was not recorded.`);
  const hasAction = (a: Action): boolean => d.trace.action.includes(a);
  if (d.trace.length > 0 && !hasAction(Action.free_requested) && hasAction(Action.free_completed))
    out.push(
      'the trace has no free_requested entries (skip_actions?): allocated memory never drops in the curves.',
    );
  out.push(...unmodelledDeviceWarnings(s, d));
  return out;
}

function snapshotWarnings(s: Snapshot): string[] {
  const out: string[] = s.violations.map((v) => v.text);
  if (s.inert.count > 0) {
    const names = s.inert.examples.map((x) => x.toString()).join(', ');
    out.push(
      `the pickle asked for ${s.inert.count} Python import(s)/call(s) (${names}); memlens never runs them.`,
    );
  }
  if (s.otherKeys.length > 0) out.push(`top-level keys memlens does not read: ${s.otherKeys.join(', ')}`);
  out.push(...unmodelledFileWarnings(s));
  // torch_npu never writes allocator_settings: its absence dates only PyTorch's own files.
  if (s.allocatorSettings === undefined && s.layout === 'dict' && !isNpu(s.producer))
    out.push('no allocator_settings: recorded by PyTorch older than 2.3.');
  return out;
}
