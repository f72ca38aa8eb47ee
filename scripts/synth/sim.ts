/**
 * One device's simulation: allocator model driven by the workload, as a stream of events.
 * Everything derives from the plan and the device number, so a second run replays the first
 * exactly; the generator relies on that to write the final state before the trace.
 */
import { Allocator } from './allocator.js';
import { CallSites } from './callsites.js';
import { Clock, type SimEvent } from './events.js';
import { StackTable } from './frames.js';
import { chooseModel, type ModelConfig } from './model.js';
import { type OomCause, type OomFacts, plantOom } from './oom-plant.js';
import type { ResolvedOptions } from './options.js';
import { type ExtraBufferFacts, plantExtraBuffer } from './rank-plant.js';
import { Rng } from './rng.js';
import { TrainingWorkload, type WorkloadStreams } from './training.js';

/** What every device and both passes share. */
export interface Plan {
  readonly options: ResolvedOptions;
  readonly model: ModelConfig;
  readonly stacks: StackTable;
  readonly sites: CallSites;
  /** Events to simulate per device before the finale (more than kept when the ring buffer overflows). */
  readonly mainEvents: number;
  /** µs since the epoch at which recording starts (late 2025). */
  readonly startTime: number;
}

const GIB = 2 ** 30;
/** H100 80GB HBM3 as cudaMemGetInfo reports it. */
const TOTAL_MEMORY = 81559 * 2 ** 20;

export function makePlan(options: ResolvedOptions): Plan {
  const rng = new Rng(options.seed);
  const model = chooseModel(rng.fork(1));
  const stacks = new StackTable();
  const sites = new CallSites(stacks, rng.fork(2));
  const keep = options.ringBufferOverflow ? 0.5 + 0.3 * rng.fork(3).next() : 1;
  const mainEvents = Math.ceil(options.events / keep);
  const startTime = 1_762_000_000_000_000 + rng.fork(4).int(0, 2_000_000_000) * 1000;
  return { options, model, stacks, sites, mainEvents, startTime };
}

export class DeviceSim {
  readonly allocator: Allocator;
  readonly workload: TrainingWorkload;
  readonly streams: WorkloadStreams;
  /** What the oom-cause and extra-buffer options planted, once run. */
  oomFacts: OomFacts | null = null;
  private startBuffer: ExtraBufferFacts | null = null;
  private readonly plants: DevicePlantsOf;

  constructor(
    private readonly plan: Plan,
    readonly device: number,
  ) {
    const o = plan.options;
    this.plants = devicePlantsOf(o, device);
    const rng = new Rng((o.seed ^ Math.imul(device + 1, 0x9e3779b1)) >>> 0);
    const clock = new Clock(plan.startTime + rng.int(0, 5000));
    this.allocator = new Allocator(
      {
        totalMemory: TOTAL_MEMORY,
        outsideMemory: rng.int(400, 1400) * 2 ** 20,
        vaBase: 0x7f0000000000 + device * 2 ** 43 + rng.int(0, 255) * 2 * GIB,
        expandable: o.expandableSegments,
        poolCount: o.privatePool ? 2 : 1,
      },
      clock,
    );
    this.streams = makeStreams(rng.fork(7), o.streams);
    this.workload = new TrainingWorkload(
      this.allocator,
      clock,
      rng.fork(9),
      plan.sites,
      plan.model,
      this.streams,
      {
        privatePool: o.privatePool,
        emptyCacheEvery: o.emptyCacheEvery,
        plants: {
          leakBytes: this.plants.leakBytes,
          cycleBytes: o.cycleBytes,
          gcEvery: o.gcEvery,
          extraBuffer: this.plants.extraBufferStep === null ? null : this.plants,
        },
      },
    );
  }

  /** Main loop until `plan.mainEvents` (stopping only between operations), then the finale. */
  *events(): Generator<SimEvent, void> {
    let n = -this.beginning();
    const run = this.workload.run();
    while (n < this.plan.mainEvents) {
      if (run.next().done) break;
      n += this.allocator.queue.length;
      yield* this.drain();
    }
    this.ending();
    yield* this.drain();
  }

  /** Same run as events(), keeping only the count: the first pass needs the final state alone. */
  count(): number {
    this.allocator.countOnly = true;
    const planted = this.beginning();
    const run = this.workload.run();
    while (this.allocator.emitted - planted < this.plan.mainEvents) {
      if (run.next().done) break;
    }
    this.ending();
    return this.allocator.emitted;
  }

  /** What the extra-buffer option planted, at start-up or at the top of its step; null if none. */
  get extraBuffer(): ExtraBufferFacts | null {
    return this.startBuffer ?? this.workload.plants.extraBuffer;
  }

  /** The extra buffer, before the workload; its events are outside the workload's budget. */
  private beginning(): number {
    const { extraBuffer: bytes, extraBufferStep } = this.plants;
    if (bytes === 0 || extraBufferStep !== null) return 0;
    const before = this.allocator.emitted;
    this.startBuffer = plantExtraBuffer(this.allocator, this.plan.sites, bytes);
    return this.allocator.emitted - before;
  }

  private ending(): void {
    const o = this.plan.options;
    const cause = this.plants.oomCause;
    if (cause !== null) this.oomFacts = plantOom(this.allocator, this.plan.sites, cause);
    this.workload.finale(o.oom && o.oomCause === null, o.pendingFrees, o.oomRetries);
  }

  private drain(): SimEvent[] {
    const q = this.allocator.queue;
    this.allocator.queue = [];
    return q;
  }
}

interface DevicePlantsOf {
  leakBytes: number;
  extraBuffer: number;
  extraBufferStep: number | null;
  oomCause: OomCause | null;
}

/** The run-wide plants, replaced by the device's own where it has some (a run's odd rank). */
function devicePlantsOf(o: ResolvedOptions, device: number): DevicePlantsOf {
  const own = o.devicePlants[device] ?? {};
  return {
    leakBytes: own.leakBytes ?? o.leakBytes,
    extraBuffer: own.extraBuffer ?? o.extraBuffer,
    extraBufferStep: own.extraBufferStep ?? o.extraBufferStep,
    oomCause: own.oomCause ?? o.oomCause,
  };
}

/** cudaStream_t values are pointers: large, 16-byte aligned, distinct per device. */
function makeStreams(rng: Rng, extra: number): WorkloadStreams {
  const base = 0x5500_0000_0000 + rng.int(0, 0xffff) * 2 ** 24;
  const values = Array.from(
    { length: extra + 1 },
    (_, i) => base + (i + 1) * 0x1a0 * 16 + rng.int(0, 15) * 16,
  );
  const capture = values.pop()!;
  return { input: values[0] ?? 0, comm: values[1] ?? null, side: values.slice(2), capture };
}
