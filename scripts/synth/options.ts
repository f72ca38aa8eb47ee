import { type OomCause, validateScenarios } from './scenario-options.js';

/** Options of the synthetic snapshot generator. Everything is deterministic from `seed`. */
export interface SynthOptions {
  /** Default 1. */
  seed?: number;
  /** Trace entries per device in the file. Takes precedence over `targetBytes`. */
  events?: number;
  /** Approximate size of the output in bytes (calibrated on a small sample). */
  targetBytes?: number;
  /** Only 'training' for now: parameters, then forward / backward / optimizer iterations. */
  scenario?: 'training';
  /** Number of devices, each with its own allocator and trace (default 1). */
  devices?: number;
  /** Extra CUDA streams besides the default stream 0 (default 0). */
  streams?: number;
  /** End the trace with an OOM (after the allocator's flush), as a failed allocation does. */
  oom?: boolean;
  /** With `oom`: the same request fails this many times more (a retry loop), then one of half its extra size once (default 0). */
  oomRetries?: number;
  /** `expandable_segments:True`: segments grow by segment_map / shrink by segment_unmap. */
  expandableSegments?: boolean;
  /** Keep only the last entries, as the history ring buffer does once `max_entries` is reached. */
  ringBufferOverflow?: boolean;
  /** Leave some blocks freed by the user but waiting on another stream (active_pending_free). */
  pendingFrees?: boolean;
  /** Allocate part of the work in a private pool (CUDA graph pool, segment_pool_id (0, 1)). */
  privatePool?: boolean;
  /** 'list': top level is the list of segments (`torch.cuda.memory_snapshot()`);
   *  'v2.0': PyTorch 2.0 shape (blocks with `history`, traces without time/frames). */
  legacy?: 'list' | 'v2.0';
  /** Trace entries without `time_us` (PyTorch 2.1). */
  noTimeUs?: boolean;
  /** Pickle protocol: 4 (default, Python <= 3.13), 5 (Python 3.14) or 2/3. */
  protocol?: 2 | 3 | 4 | 5;
  /** One frames list per distinct stack instead of one per captured traceback (smaller files;
   *  PyTorch itself shares a list only between the events of one traceback). */
  shareIdenticalStacks?: boolean;
  /** Call empty_cache every this many iterations (default: seeded choice between 40 and 120). */
  emptyCacheEvery?: number;
  /** Plant a leak: every step keeps a tensor of this many bytes (see planted.ts). */
  leakBytes?: number;
  /** Plant reference cycles: tensors of these sizes made every step, freed only by gc.collect(). */
  cycleBytes?: number[];
  /** gc.collect() every this many steps when `cycleBytes` is set (default 4). */
  gcEvery?: number;
  /** End with an OOM of this cause, with the figures memlens must find (see oom-plant.ts). */
  oomCause?: OomCause;
  /** A buffer of this many bytes (a multiple of 2 MiB, from 10 MiB) allocated at start-up from a
   *  known line and kept: what a second rank differs by (see rank-plant.ts). */
  extraBuffer?: number;
  /** The step at whose top the extra buffer is allocated (default: at start-up, before step 0). */
  extraBufferStep?: number;
  /** Plants for some devices only, by device index: a run's ranks that differ (see run.ts). They
   *  replace the options of the same names on that device. */
  devicePlants?: Record<number, DevicePlants>;
}

export interface DevicePlants {
  leakBytes?: number;
  extraBuffer?: number;
  extraBufferStep?: number;
  oomCause?: OomCause;
}

export interface ResolvedOptions {
  seed: number;
  events: number;
  devices: number;
  streams: number;
  oom: boolean;
  oomRetries: number;
  expandableSegments: boolean;
  ringBufferOverflow: boolean;
  pendingFrees: boolean;
  privatePool: boolean;
  legacy: 'list' | 'v2.0' | null;
  noTimeUs: boolean;
  protocol: 2 | 3 | 4 | 5;
  shareIdenticalStacks: boolean;
  emptyCacheEvery: number;
  leakBytes: number;
  cycleBytes: number[];
  gcEvery: number;
  oomCause: OomCause | null;
  extraBuffer: number;
  extraBufferStep: number | null;
  devicePlants: Record<number, DevicePlants>;
}

/** Bytes of one trace entry on average with the default shape, used before calibration. */
const BYTES_PER_EVENT_GUESS = 135;
const DEFAULT_EVENTS = 5000;

export function resolveOptions(o: SynthOptions, events?: number): ResolvedOptions {
  validate(o);
  const seed = (o.seed ?? 1) >>> 0;
  const devices = o.devices ?? 1;
  const n = events ?? o.events ?? guessEvents(o.targetBytes, devices);
  checkInt('events', n, 1, 2 ** 40);
  return {
    seed,
    events: n,
    devices,
    streams: o.streams ?? 0,
    oom: o.oom ?? false,
    oomRetries: o.oomRetries ?? 0,
    expandableSegments: o.expandableSegments ?? false,
    ringBufferOverflow: o.ringBufferOverflow ?? false,
    pendingFrees: o.pendingFrees ?? false,
    privatePool: o.privatePool ?? false,
    legacy: o.legacy ?? null,
    noTimeUs: o.noTimeUs ?? false,
    protocol: o.protocol ?? 4,
    shareIdenticalStacks: o.shareIdenticalStacks ?? false,
    emptyCacheEvery: o.emptyCacheEvery ?? 40 + (seed % 81),
    leakBytes: o.leakBytes ?? 0,
    cycleBytes: o.cycleBytes ?? [],
    gcEvery: o.gcEvery ?? 4,
    oomCause: o.oomCause ?? null,
    extraBuffer: o.extraBuffer ?? 0,
    extraBufferStep: o.extraBufferStep ?? null,
    devicePlants: o.devicePlants ?? {},
  };
}

function validate(o: SynthOptions): void {
  checkInt('devices', o.devices ?? 1, 1, 64);
  checkInt('streams', o.streams ?? 0, 0, 16);
  if (o.emptyCacheEvery !== undefined) checkInt('emptyCacheEvery', o.emptyCacheEvery, 1, 2 ** 31);
  checkInt('leakBytes', o.leakBytes ?? 0, 0, 2 ** 34);
  for (const b of o.cycleBytes ?? []) checkInt('cycleBytes', b, 1, 2 ** 34);
  checkInt('gcEvery', o.gcEvery ?? 4, 1, 2 ** 31);
  validateScenarios(o);
  for (const [device, plants] of Object.entries(o.devicePlants ?? {})) {
    checkInt('devicePlants device', Number(device), 0, (o.devices ?? 1) - 1);
    checkInt('leakBytes', plants.leakBytes ?? 0, 0, 2 ** 34);
    checkInt('extraBufferStep', plants.extraBufferStep ?? 0, 0, 2 ** 31);
    validateScenarios({ ...o, ...plants });
  }
  if (o.extraBufferStep !== undefined) checkInt('extraBufferStep', o.extraBufferStep, 0, 2 ** 31);
  if (o.scenario !== undefined && o.scenario !== 'training')
    throw new RangeError(`unknown scenario ${o.scenario}`);
  if (o.protocol !== undefined && ![2, 3, 4, 5].includes(o.protocol)) {
    throw new RangeError('protocol must be 2, 3, 4 or 5');
  }
  if (o.legacy !== undefined && o.legacy !== 'list' && o.legacy !== 'v2.0') {
    throw new RangeError(`unknown legacy format ${o.legacy}`);
  }
  if (o.legacy === 'v2.0' && o.expandableSegments)
    throw new RangeError('PyTorch 2.0 had no expandable segments');
}

function guessEvents(targetBytes: number | undefined, devices: number): number {
  if (targetBytes === undefined) return DEFAULT_EVENTS;
  return Math.max(1, Math.round(targetBytes / BYTES_PER_EVENT_GUESS / devices));
}

function checkInt(name: string, v: number, lo: number, hi: number): void {
  if (!Number.isInteger(v) || v < lo || v > hi)
    throw new RangeError(`${name} must be an integer in [${lo}, ${hi}]`);
}
