/**
 * A whole training run as its producers write it: one snapshot per rank per step window (each
 * window's trace holds only that window, its segments everything alive at its end, as verl's
 * profiler does by clearing the history after each dump) and an OOM dump, in a chosen layout.
 *
 * The ranks are the devices of one generated snapshot: one model and one set of call sites, each
 * rank with its own random stream (sequence lengths differ from rank to rank, as batches do),
 * and the planted differences on their own ranks only. Each window is cut out of the rank's whole
 * trace by memlens's own slicer, at the ProfilerStep boundaries.
 */

import { planSlice } from '../../src/engine/analyses/slice/index.js';
import { findIterations } from '../../src/engine/derived/index.js';
import { concatChunks, PickleWriter } from '../../src/engine/encode/index.js';
import { loadSnapshotBytes } from '../../src/engine/load/index.js';
import type { DeviceModel, Snapshot } from '../../src/engine/model/index.js';
import { generateSnapshotBytes } from './generate.js';
import type { OomCause } from './oom-plant.js';
import type { DevicePlants } from './options.js';

/**
 * The producers' layouts (src/engine/run-layout/layouts.ts and docs/producers.md cite each one's
 * source); torchtitan-2025: its iteration_<N>/ form. lmms-engine and Megatron-Bridge dump once per
 * rank, at the profiler's stop step, with no step in the name.
 */
export type RunLayout =
  | 'verl'
  | 'torchtitan'
  | 'torchtitan-2025'
  | 'composer'
  | 'lmms-engine'
  | 'megatron-bridge';

export const RUN_LAYOUTS: readonly RunLayout[] = [
  'verl',
  'torchtitan',
  'torchtitan-2025',
  'composer',
  'lmms-engine',
  'megatron-bridge',
];

/** Layouts whose producer writes one dump per rank when its profiling ends, not one per window. */
const AT_END: ReadonlySet<RunLayout> = new Set(['lmms-engine', 'megatron-bridge']);

export interface RunOptions {
  ranks: number;
  /** Step windows written per rank (steps 1..windows × stepsPerWindow). */
  windows: number;
  /** Steps per window (verl's steps<A>-<B>/ when more than one). Default 1. */
  stepsPerWindow?: number;
  layout?: RunLayout;
  seed?: number;
  /** One rank allocates a buffer of `bytes` at the top of step `step` and keeps it. */
  extraBuffer?: { rank: number; bytes: number; step: number };
  /** One rank keeps a tensor of `bytes` every step from the start: live bytes grow window after window. */
  growth?: { rank: number; bytes: number };
  /** One rank dies of an OOM of this cause in the step after the last window. */
  oom?: { rank: number; cause: OomCause };
}

export interface RunFile {
  /** Path relative to the run's root, '/'-separated. */
  path: string;
  rank: number;
  /** `end`: the one dump of a layout that writes at its profiler's stop step (all the windows' steps). */
  kind: 'step' | 'end' | 'oom';
  /** First and last step of the window (the OOM dump: the steps since the last window, to the one it died in). */
  steps: [number, number];
  bytes: Uint8Array;
}

/** Trace entries of the generated model per step are about 1,300; a margin for the OOM's step. */
const ENTRIES_PER_STEP = 1500;

/** Writes every file of the run; what was planted is in the options, echoed back per file. */
export function generateRun(o: RunOptions): RunFile[] {
  const per = o.stepsPerWindow ?? 1;
  const lastStep = o.windows * per;
  const snapshot = generateSteps(o, lastStep + 2);
  const files: RunFile[] = [];
  for (const d of snapshot.devices) {
    const startOf = stepStarts(snapshot, d);
    const at = (step: number) => {
      const entry = startOf.get(step);
      if (entry === undefined) throw new RangeError(`rank ${d.device} has no ProfilerStep#${step}`);
      return entry;
    };
    if (AT_END.has(o.layout ?? 'verl')) {
      // Recording from the first step to the stop step, dumped once: every window's steps in one file.
      const bytes = sliceBytes(snapshot, d, at(1), at(lastStep + 1));
      files.push({ path: endPath(o, d.device), rank: d.device, kind: 'end', steps: [1, lastStep], bytes });
    } else
      for (let w = 0; w < o.windows; w++) {
        const first = 1 + w * per;
        const last = first + per - 1;
        const bytes = sliceBytes(snapshot, d, at(first), at(last + 1));
        files.push({
          path: stepPath(o, d.device, first, last),
          rank: d.device,
          kind: 'step',
          steps: [first, last],
          bytes,
        });
      }
    if (o.oom?.rank === d.device) {
      // The history since the last window's dump, up to the OOM: every step after the last window.
      const died = Math.max(...startOf.keys());
      const bytes = sliceBytes(snapshot, d, at(lastStep + 1), d.trace.length);
      files.push({
        path: oomPath(o, d.device, died),
        rank: d.device,
        kind: 'oom',
        steps: [lastStep + 1, died],
        bytes,
      });
    }
  }
  return files;
}

/**
 * The generated model's size (so its entries per step) depends on the seed: when the first try
 * holds too few steps on some rank, try again with the budget scaled by what it fell short.
 */
function generateSteps(o: RunOptions, steps: number): Snapshot {
  let perStep = ENTRIES_PER_STEP;
  for (let attempt = 0; ; attempt++) {
    const s = loadSnapshotBytes(generateSnapshotBytes(synthOptions(o, steps, perStep)).bytes);
    const fewest = Math.min(...s.devices.map((d) => stepStarts(s, d).size));
    if (fewest >= steps + 1 || attempt === 3) return s;
    perStep = Math.ceil((perStep * (steps + 2)) / Math.max(1, fewest - 1));
  }
}

/** First trace entry of each ProfilerStep#N of the device, by N. */
function stepStarts(s: Snapshot, d: DeviceModel): Map<number, number> {
  const it = findIterations(s, d);
  const out = new Map<number, number>();
  it.names.forEach((name, k) => {
    const m = /^ProfilerStep#(\d+)$/.exec(name);
    if (m) out.set(Number(m[1]), it.start[k]!);
  });
  return out;
}

function synthOptions(o: RunOptions, steps: number, perStep: number) {
  const plants: Record<number, DevicePlants> = {};
  const at = (rank: number): DevicePlants => {
    if (!Number.isInteger(rank) || rank < 0 || rank >= o.ranks)
      throw new RangeError(`no rank ${rank} in the run`);
    plants[rank] ??= {};
    return plants[rank];
  };
  if (o.extraBuffer)
    Object.assign(at(o.extraBuffer.rank), {
      extraBuffer: o.extraBuffer.bytes,
      extraBufferStep: o.extraBuffer.step,
    });
  if (o.growth) at(o.growth.rank).leakBytes = o.growth.bytes;
  if (o.oom) at(o.oom.rank).oomCause = o.oom.cause;
  // Steps run until the events budget; the OOM plant comes after it, in the step that follows.
  return { seed: o.seed ?? 1, devices: o.ranks, events: steps * perStep, devicePlants: plants };
}

/** The entries [from, to) of a device as a window snapshot file (what a producer that clears the history after each dump writes). */
export function sliceBytes(s: Snapshot, d: DeviceModel, from: number, to: number): Uint8Array {
  const plan = planSlice(s, [d], { by: 'entries', from, to });
  const chunks: Uint8Array[] = [];
  new PickleWriter((c) => chunks.push(c.slice()), { protocol: plan.protocol }).dump(plan.value);
  return concatChunks(chunks);
}

/** verl names processes by pid; a stable one per rank keeps runs reproducible. */
const pid = (rank: number) => 40_000 + rank;

/**
 * The stop-step dump. lmms-engine: `snapshot_{reason}_rank{rank}.pickle` with reason "stop_step", in
 * `<output_dir>/memory_snapshot` (src/lmms_engine/utils/profiler.py, MemorySnapshotProfiler.stop_and_save;
 * train/fsdp2/fsdp2_trainer.py). Megatron-Bridge: `f"{filename}_{rank}{ext}"` of memory_snapshot_path,
 * default /nemo_run/snapshot.pickle (src/megatron/bridge/training/utils/train_utils.py, config.py).
 */
function endPath(o: RunOptions, rank: number): string {
  return o.layout === 'lmms-engine'
    ? `memory_snapshot/snapshot_stop_step_rank${rank}.pickle`
    : `snapshot_${rank}.pickle`;
}

function stepPath(o: RunOptions, rank: number, first: number, last: number): string {
  switch (o.layout ?? 'verl') {
    case 'lmms-engine':
    case 'megatron-bridge':
      return endPath(o, rank);
    case 'verl':
      return `${first === last ? `step${first}` : `steps${first}-${last}`}/torch_memory_rank${rank}_pid${pid(rank)}.pickle`;
    case 'torchtitan':
      return `profiling/memory_snapshot/${titanStepDir(last)}/${titanFile(rank, last)}`;
    case 'torchtitan-2025':
      return `memory_snapshot/iteration_${last}/rank${rank}_memory_snapshot.pickle`;
    case 'composer':
      return `torch_traces/rank${rank}.${last}.memory_snapshot.pickle`;
  }
}

function oomPath(o: RunOptions, rank: number, step: number): string {
  switch (o.layout ?? 'verl') {
    case 'verl':
      return `oom_20251125-120000-${String(step).padStart(6, '0')}/torch_memory_oom_rank${rank}_pid${pid(rank)}.pickle`;
    case 'torchtitan':
      return `profiling/memory_snapshot/${titanStepDir(step)}_exit/${titanFile(rank, step)}`;
    case 'torchtitan-2025':
      return `memory_snapshot/iteration_${step}_exit/rank${rank}_memory_snapshot.pickle`;
    case 'composer':
      return `torch_traces/rank${rank}_oom_snapshot.pickle`;
    // dump_on_exception("oom_observer"): f"snapshot_{reason}_rank{rank}_pid{pid}_{int(time.time())}.pickle".
    case 'lmms-engine':
      return `memory_snapshot/snapshot_oom_observer_rank${rank}_pid${pid(rank)}_${1_764_072_000 + step}.pickle`;
    // The OOM observer's f"{base}_oom_rank-{rank}{ext}".
    case 'megatron-bridge':
      return `snapshot_oom_rank-${rank}.pickle`;
  }
}

/** torchtitan's MEMORY_STEP_DIR "step_{step:012d}" and MEMORY_FILE "{rank:06d}_step_{step}.pickle". */
const titanStepDir = (step: number) => `step_${String(step).padStart(12, '0')}`;
const titanFile = (rank: number, step: number) => `${String(rank).padStart(6, '0')}_step_${step}.pickle`;
