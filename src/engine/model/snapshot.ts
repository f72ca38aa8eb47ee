import { SnapshotError } from '../base/errors.js';
import { describeValue, type Inert, isDict, isInert, type PyDict, shortText } from '../values/py-values.js';
import type { AllocationFacts, Allocations } from './allocations.js';
import type { DecodedPickle } from './decoded.js';
import { type DeviceTrace, deviceTrace } from './device-trace.js';
import { type EntryFacts, entryFacts } from './entry-facts.js';
import { checkSegments, checkTotals, checkTraceSizes, type Violation } from './invariants.js';
import { LazyDevice } from './lazy-device.js';
import type { LiveIndex } from './live-index.js';
import { detectProducer, type Producer } from './producer.js';
import type { RowList } from './row-list.js';
import { readSegments, type SegmentTables } from './segments.js';
import type { StackTable } from './stack-table.js';
import { endFigures, type RunningTotals, runningTotals } from './totals.js';
import type { TraceColumns } from './trace-columns.js';
import { markWorkspace, type WorkspaceMarks } from './workspace.js';

export interface Annotation {
  name: string;
  stage: string;
  device: number;
  timeUs: number;
}

export interface DeviceModel {
  device: number;
  trace: DeviceTrace;
  /** Of the whole device's trace (a stream view keeps the device's). */
  facts: EntryFacts;
  totals: RunningTotals;
  readonly allocations: Allocations;
  readonly live: LiveIndex;
  /** allocations.facts, without building the allocation table where it is not built yet. */
  readonly allocationFacts: AllocationFacts;
  /** Indices into `Snapshot.tables.segments` of this device's segments. */
  segmentIds: number[];
}

export type SnapshotLayout = 'dict' | 'segment-list';

export interface Snapshot {
  layout: SnapshotLayout;
  /** Who wrote the file and what in it said so (producer.ts). */
  producer: Producer;
  /** torch_npu's workspace blocks (workspace.ts). */
  workspace: WorkspaceMarks;
  protocol: number | undefined;
  /** `allocator_settings` as written (PyTorch ≥ 2.3), else undefined. */
  allocatorSettings: PyDict | undefined;
  annotations: Annotation[];
  tables: SegmentTables;
  stacks: StackTable;
  traceColumns: TraceColumns;
  devices: DeviceModel[];
  /** Top-level keys memlens does not read (kept for the report). */
  otherKeys: string[];
  /** Top-level values other than segments and device_traces, as decoded, in file order (for `slice`). */
  rest: PyDict;
  /** Rows of trace-entry lists anywhere in the file (device_traces, host_traces): the decoder keeps
   *  their entries in `traceColumns`, so the lists themselves are empty. */
  traceRows: Map<unknown[], RowList>;
  /** Length of `device_traces` (one list per device ordinal, empty ones included). */
  deviceTraceLists: number;
  inert: { count: number; examples: Inert[] };
  /** Trace entries the decoder's WebAssembly scanner read (0 for JSON, or where it cannot run). */
  scannedEntries: number;
  /** What the allocator cannot produce, found at load, and what was done about it (invariants.ts). */
  violations: Violation[];
}

/** Decoded pickle (or JSON converted to the same form) → the indexed model. */
export function buildSnapshot(decoded: DecodedPickle): Snapshot {
  const root = decoded.root;
  if (isInert(root)) {
    throw new SnapshotError(
      `not a memory snapshot: the pickle is ${describeValue(root)}, and memlens never runs pickled code`,
    );
  }
  const layout: SnapshotLayout = Array.isArray(root) ? 'segment-list' : 'dict';
  const top = Array.isArray(root) ? { segments: root } : root;
  if (!isDict(top) || !('segments' in top)) throw notASnapshot(root);
  const checked = checkSegments(readSegments(top.segments));
  const tables = checked.tables;
  const lists = traceLists(top.device_traces, decoded.traceLists);
  const producer = detectProducer({ top, cols: decoded.trace, stacks: decoded.stacks, tables });
  const workspace = markWorkspace(tables, decoded.trace, lists);
  const violations = [...checked.violations, ...checkTraceSizes(decoded.trace, lists)];
  const deviceIds = devicesIn(tables, lists);
  if (deviceIds.length === 0 && violations.length > 0) {
    // Every segment was impossible and there is no trace: no figure would be honest.
    const what = violations.map((v) => v.what).join('; ');
    throw new SnapshotError(`no figure would be honest: ${what}; and the file holds nothing else`);
  }
  if (deviceIds.length === 0) {
    throw new SnapshotError(
      'empty snapshot: no segments and no trace entries (was memory recording on, and on this process?)',
    );
  }
  const devices = deviceIds.map((d) => buildDevice(d, decoded.trace, lists[d], tables));
  violations.push(...checkTotals(devices));
  return {
    layout,
    producer,
    workspace,
    protocol: decoded.protocol,
    allocatorSettings: isDict(top.allocator_settings) ? top.allocator_settings : undefined,
    annotations: readAnnotations(top.external_annotations),
    tables,
    stacks: decoded.stacks,
    traceColumns: decoded.trace,
    devices,
    otherKeys: Object.keys(top).filter((k) => !KNOWN_KEYS.has(k)),
    rest: withoutBulk(top),
    traceRows: decoded.traceLists,
    deviceTraceLists: lists.length,
    inert: decoded.inert,
    scannedEntries: decoded.scannedEntries ?? 0,
    violations,
  };
}

const KNOWN_KEYS = new Set(['segments', 'device_traces', 'allocator_settings', 'external_annotations']);

function withoutBulk(top: PyDict): PyDict {
  const rest: PyDict = Object.create(null);
  for (const [k, v] of Object.entries(top)) if (k !== 'segments' && k !== 'device_traces') rest[k] = v;
  return rest;
}

function notASnapshot(root: unknown): SnapshotError {
  if (isDict(root)) {
    const keys = Object.keys(root)
      .slice(0, 5)
      .map((k) => `'${k}'`);
    return new SnapshotError(
      `not a memory snapshot: a dict without 'segments' (keys: ${keys.join(', ') || 'none'})`,
    );
  }
  return new SnapshotError(
    `not a memory snapshot: the top level is ${describeValue(root)}, expected a dict with 'segments'`,
  );
}

function traceLists(v: unknown, rowsOf: Map<unknown[], RowList>): (RowList | undefined)[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new SnapshotError(`'device_traces' is ${describeValue(v)}, expected a list`);
  return v.map((list, d) => {
    if (!Array.isArray(list))
      throw new SnapshotError(`device_traces[${d}] is ${describeValue(list)}, expected a list`);
    const rows = rowsOf.get(list);
    if (rows === undefined && list.length > 0) {
      throw new SnapshotError(
        `device_traces[${d}] holds ${describeValue(list[0])}, expected trace entry dicts`,
      );
    }
    return rows;
  });
}

function devicesIn(tables: SegmentTables, lists: (RowList | undefined)[]): number[] {
  const ids = new Set<number>();
  for (const s of tables.segments) ids.add(s.device);
  lists.forEach((rows, d) => {
    if (rows !== undefined && rows.count > 0) ids.add(d);
  });
  return [...ids].sort((a, b) => a - b);
}

function buildDevice(
  device: number,
  cols: TraceColumns,
  rows: RowList | undefined,
  tables: SegmentTables,
): DeviceModel {
  const trace = deviceTrace(cols, rows);
  const facts = entryFacts(trace, cols, device);
  const totals = runningTotals(trace, endFigures(tables, device));
  const segmentIds: number[] = [];
  tables.segments.forEach((s, i) => {
    if (s.device === device) segmentIds.push(i);
  });
  return new LazyDevice(device, trace, facts, totals, segmentIds, tables, cols);
}

function readAnnotations(v: unknown): Annotation[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isDict).map((a) => ({
    name: a.name === undefined ? '' : shortText(a.name),
    stage: typeof a.stage === 'string' ? a.stage : '',
    device: typeof a.device === 'number' ? a.device : -1,
    timeUs: typeof a.time_us === 'number' ? a.time_us : Number.NaN,
  }));
}
