/**
 * A simulated run as a snapshot value (the shape `torch.cuda.memory._snapshot()` returns), for the
 * pickle writer: dump-time segments and blocks of the simulation, its trace with the recorded
 * stacks and times, and the settings it ran under. Every memlens view and memory_viz open it.
 */
import {
  PyFloat,
  type PyValue,
  pyTuple,
  type Shared,
  StreamedList,
  shared,
} from '../encode/pickle-values.js';
import { BlockState } from '../model/segments.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { NO_STACK } from '../model/stack-table.js';
import { Action, KNOWN_ACTIONS } from '../model/trace-columns.js';
import type { SimAllocator } from './allocator.js';
import type { SimContext } from './context.js';
import type { Replay } from './replay.js';
import { blockStateOf, segmentViews } from './segment-views.js';
import { describeSettings, type SimSettings } from './settings.js';

const STATE_NAMES: Record<number, string> = {
  [BlockState.allocated]: 'active_allocated',
  [BlockState.pendingFree]: 'active_pending_free',
  [BlockState.inactive]: 'inactive',
};

export function simulatedSnapshot(
  s: Snapshot,
  runs: { device: DeviceModel; replay: Replay; settings: SimSettings }[],
): PyValue {
  const frames = new FramesOf(s);
  const segments: PyValue[] = [];
  const traces: PyValue[] = [];
  for (const run of runs) {
    segments.push(...segmentDicts(run.device, run.replay, frames));
    while (traces.length < run.device.device) traces.push([]);
    traces[run.device.device] = new StreamedList(traceEntries(run.device, run.replay, frames));
  }
  return {
    segments,
    device_traces: traces,
    allocator_settings: settingsDict(runs[0]!.settings),
    external_annotations: s.annotations.map((a) => ({
      device: a.device,
      name: a.name,
      stage: a.stage,
      time_us: Number.isNaN(a.timeUs) ? 0 : a.timeUs,
    })),
  };
}

/** Each stack's frames list pickled once and referred to afterwards, as PyTorch does. */
class FramesOf {
  private readonly cache = new Map<number, Shared>();
  private readonly empty: PyValue[] = [];

  constructor(private readonly s: Snapshot) {}

  of(stack: number): PyValue {
    if (stack === NO_STACK) return this.empty;
    let v = this.cache.get(stack);
    if (v === undefined) {
      v = shared(
        this.s.stacks.frames(stack).map((f) => ({ filename: f.filename, line: f.line, name: f.name })),
      );
      this.cache.set(stack, v);
    }
    return v;
  }
}

function segmentDicts(d: DeviceModel, r: Replay, frames: FramesOf): PyValue[] {
  const a = r.allocator;
  const ctx = r.context;
  return segmentViews(a).map((v) => {
    let allocated = 0;
    let active = 0;
    let requested = 0;
    const blocks = v.blocks.map((b) => {
      const state = blockStateOf(a, b);
      const size = a.blocks.size[b]!;
      if (state === BlockState.allocated) allocated += size;
      if (state !== BlockState.inactive) {
        active += size;
        requested += a.blocks.requested[b]!;
      }
      return {
        address: a.blocks.addr[b]!,
        size,
        requested_size: a.blocks.requested[b]!,
        state: STATE_NAMES[state]!,
        frames: frames.of(stackOfBlock(d, a, b)),
      };
    });
    const poolId = ctx.poolIdOf(v.pool >> 1);
    return {
      device: d.device,
      address: v.address,
      total_size: v.size,
      allocated_size: allocated,
      active_size: active,
      requested_size: requested,
      stream: ctx.rawStreams[v.stream] ?? 0,
      segment_type: (v.pool & 1) === 1 ? 'small' : 'large',
      segment_pool_id: pyTuple([poolId[0], poolId[1]]),
      is_expandable: v.expandable,
      frames: frames.of(v.entry >= 0 ? d.trace.stack[v.entry]! : NO_STACK),
      blocks,
    };
  });
}

function stackOfBlock(d: DeviceModel, a: SimAllocator, b: number): number {
  const owner = a.blocks.owner[b]!;
  return owner >= 0 && a.blocks.state[b] !== 0 ? d.allocations.stack[owner]! : NO_STACK;
}

function* traceEntries(d: DeviceModel, r: Replay, frames: FramesOf): Generator<PyValue> {
  const log = r.allocator.log;
  const ctx: SimContext = r.context;
  const t = d.trace;
  for (let i = 0; i < log.length; i++) {
    const e = log.entry[i]!;
    const action = log.action[i]!;
    const time = e >= 0 && !Number.isNaN(t.timeUs[e]!) ? t.timeUs[e]! : 0;
    const common = {
      action: KNOWN_ACTIONS[action]!,
      size: log.size[i]!,
      stream: ctx.rawStreams[log.stream[i]!] ?? 0,
      time_us: time,
      frames: frames.of(e >= 0 ? t.stack[e]! : NO_STACK),
    };
    yield action === Action.oom
      ? { ...common, device_free: log.addr[i]! }
      : { ...common, addr: log.addr[i]! };
  }
}

function settingsDict(s: SimSettings): PyValue {
  const divisions: Record<string, number> = {};
  s.divisions.forEach((v, i) => {
    divisions[String(2 ** i)] = v;
  });
  return {
    PYTORCH_CUDA_ALLOC_CONF: describeSettings(s),
    max_split_size: Number.isFinite(s.maxSplitSize) ? s.maxSplitSize : -1,
    garbage_collection_threshold: new PyFloat(s.gcThreshold),
    expandable_segments: s.expandable,
    roundup_power2_divisions: divisions,
    release_lock_on_cudamalloc: false,
  };
}
