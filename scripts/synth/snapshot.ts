/**
 * Builds the snapshot value for the writers. Pass 1 (here, eagerly) runs every device's
 * simulation to the end for the final segments, which come first in the file; the trace lists
 * are streamed: each re-runs its device's simulation (pass 2) while the writer pulls entries,
 * so memory stays bounded whatever the trace length.
 */
import { type PyValue, StreamedList } from '../../src/engine/encode/index.js';
import type { Annotation, SimEvent } from './events.js';
import { type DeviceFigures, deviceFigures, type ExpectedFigures, TraceFigures } from './figures.js';
import type { Plants } from './planted.js';
import { scenarioFacts } from './scenario-facts.js';
import {
  type Atoms,
  allocatorSettings,
  type Format,
  FramesResolver,
  makeAtoms,
  segmentDict,
  traceEntry,
} from './shape.js';
import { DeviceSim, type Plan } from './sim.js';
import { type SegmentView, segmentViews } from './views.js';

interface DeviceState {
  readonly device: number;
  readonly views: SegmentView[];
  readonly annotations: readonly Annotation[];
  readonly frames: FramesResolver;
  /** Events simulated; the first `skip` are lost to the ring buffer. */
  readonly total: number;
  readonly skip: number;
  readonly trace: TraceFigures;
  readonly planted: Plants;
  readonly scenario: Pick<DeviceSim, 'oomFacts' | 'extraBuffer'>;
  firstKeptTime: number;
}

export interface SnapshotBuild {
  readonly value: PyValue;
  /** Complete once the value has been written (the trace figures come from pass 2). */
  expected(): ExpectedFigures;
}

export function buildSnapshot(plan: Plan): SnapshotBuild {
  const o = plan.options;
  const states = Array.from({ length: o.devices }, (_, d) => runPass1(plan, d));
  const atoms = makeAtoms();
  const format: Format = o.legacy === 'v2.0' ? 'v2.0' : 'late';
  const segments = states.flatMap((s) => s.views.map((v) => segmentDict(v, atoms, s.frames, format)));
  const hasTrace = o.legacy !== 'list';
  const expected = (): ExpectedFigures => ({
    devices: states
      .map((s) =>
        deviceFigures(s.device, s.views, hasTrace ? s.trace : null, o.legacy === null && !o.noTimeUs),
      )
      .filter((f: DeviceFigures) => f.segments > 0 || f.trace_entries > 0),
    ...(states.some((s) => s.planted.enabled) ? { planted: states.map((s) => s.planted.facts) } : {}),
    ...scenarioFacts(states.map((s) => s.scenario)),
  });
  if (!hasTrace) return { value: segments, expected };
  const traces = states.map((s) => new StreamedList(keptEntries(plan, s, atoms)));
  if (format === 'v2.0') return { value: { segments, device_traces: traces }, expected };
  const value = {
    segments,
    device_traces: traces,
    allocator_settings: allocatorSettings(o, o.ringBufferOverflow ? o.events : null),
    external_annotations: new StreamedList(annotationDicts(states)),
  };
  return { value, expected };
}

function runPass1(plan: Plan, device: number): DeviceState {
  const sim = new DeviceSim(plan, device);
  const total = sim.count();
  const skip = plan.options.ringBufferOverflow ? Math.max(0, total - plan.options.events) : 0;
  return {
    device,
    views: segmentViews(sim.allocator, device),
    annotations: sim.workload.annotations,
    frames: new FramesResolver(plan.options.shareIdenticalStacks),
    total,
    skip,
    trace: new TraceFigures(),
    planted: sim.workload.plants,
    scenario: { oomFacts: sim.oomFacts, extraBuffer: sim.extraBuffer },
    firstKeptTime: Number.NEGATIVE_INFINITY,
  };
}

/** Pass 2: replays the device and yields the entries the ring buffer kept. */
function* keptEntries(plan: Plan, s: DeviceState, atoms: Atoms): Generator<PyValue, void> {
  const sim = new DeviceSim(plan, s.device);
  let i = 0;
  let before: SimEvent | null = null;
  for (const e of sim.events()) {
    if (i++ < s.skip) {
      before = e;
      continue;
    }
    if (s.trace.entries === 0) {
      s.trace.begin(before);
      s.firstKeptTime = e.time;
    }
    s.trace.add(e);
    yield traceEntry(e, atoms, s.frames, plan.options);
  }
  if (i !== s.total) throw new Error(`device ${s.device}: replay gave ${i} events, first run ${s.total}`);
}

/** record_function annotations of every device, in time order, within each device's kept window. */
function* annotationDicts(states: readonly DeviceState[]): Generator<PyValue, void> {
  const all: { a: Annotation; device: number }[] = [];
  for (const s of states) {
    for (const a of s.annotations) if (a.time >= s.firstKeptTime) all.push({ a, device: s.device });
  }
  all.sort((x, y) => x.a.time - y.a.time);
  for (const { a, device } of all) yield { stage: a.stage, name: a.name, device, time_us: a.time };
}
