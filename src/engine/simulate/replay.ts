/**
 * Replays one device's recorded requests (alloc, free_requested, free_completed, explicit
 * empty_cache, failed requests) through the simulated allocator, from the state the window
 * opened with. The recorded segment events are consequences of the recorded settings: they are
 * not replayed, they are what a replay under those settings must reproduce.
 */
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';
import { type AddressSource, SimAllocator } from './allocator.js';
import { ALLOCATED, NONE, PENDING } from './block-store.js';
import type { SimContext } from './context.js';
import { deviceInputs } from './device-inputs.js';
import { EventLog } from './event-log.js';
import { EMPTY_CACHE, explicitBeforeMalloc, MALLOC_RELEASE, NO_RELEASE } from './releases.js';
import { fractionActive, type SimSettings, snapshotSettings } from './settings.js';
import { loadStartState } from './start-state.js';

export interface ReplayOptions {
  settings: SimSettings;
  /** Bytes the allocator may obtain from CUDA; Infinity: unlimited. */
  capacity: number;
  /**
   * Replaying the recorded settings to check fidelity: new segments take the recorded
   * segment_alloc addresses, and releases made inside a malloc are replayed where the
   * simulator cannot cause them itself (an OOM retry flush at an unknown capacity).
   */
  recorded: boolean;
  /** Keep every event (to write the run as a snapshot), not only segment events and ooms. */
  allEvents: boolean;
}

export interface Replay {
  allocator: SimAllocator;
  context: SimContext;
  /** Trace entries replayed (all of the device's). */
  entries: number;
  /** Recorded `oom` requests that fit in the simulation. */
  oomsAvoided: number;
  /** Largest |simulated − recorded reserved bytes| after a request, and where. */
  maxReservedDeviation: number;
  maxDeviationEntry: number;
}

/** Base of synthetic addresses: above any real device address, below 2^53. */
const SYNTHETIC_BASE = 2 ** 52;
const ALIGN = 2 ** 21;

/**
 * The last run's allocator, kept alive on purpose: V8 collects the hidden classes of the
 * allocator's objects once no instance is left, and with them throws away every optimized replay
 * function, so each run of a sweep (or each web worker message) recompiled the replay and ran
 * its first part unoptimized (measured: 4-5× the steady-state time per run on a 200k-entry trace).
 */
const retained: { allocator: SimAllocator | null } = { allocator: null };

export function replayDevice(s: Snapshot, d: DeviceModel, o: ReplayOptions): Replay {
  const { context, streamOrder } = deviceInputs(s, d);
  const releases = releasesOf(s, d, o);
  const log = new EventLog(!o.allEvents);
  const a = new SimAllocator({
    settings: o.settings,
    capacity: o.capacity,
    addresses: o.recorded ? new RecordedAddresses(d) : new SyntheticAddresses(),
    log,
    privatePools: context.privatePools,
    streamOrder,
  });
  const blockOf = loadStartState(a, s, d, context);
  const result: Replay = {
    allocator: a,
    context,
    entries: d.trace.length,
    oomsAvoided: 0,
    maxReservedDeviation: 0,
    maxDeviationEntry: -1,
  };
  run(a, d, o, blockOf, context, releases, result);
  retained.allocator = a;
  return result;
}

/**
 * Where the run replays the recording's releases. Those made inside a malloc are consequences of
 * the recorded settings and capacity, except an empty_cache() right before a malloc that needed
 * new memory, which looks the same in the trace: told apart by the capacity (releases.ts).
 */
function releasesOf(s: Snapshot, d: DeviceModel, o: ReplayOptions): Uint8Array {
  const runs = deviceInputs(s, d).releases;
  const rec = snapshotSettings(s, o.settings.torchVersion);
  if (Number.isFinite(rec.maxSplitSize) || (fractionActive(rec) && rec.gcThreshold > 0)) return runs;
  return explicitBeforeMalloc(d.trace, d.totals.reserved, d.totals.start.reserved, runs.slice(), o.capacity);
}

function run(
  a: SimAllocator,
  d: DeviceModel,
  o: ReplayOptions,
  blockOf: Int32Array,
  ctx: SimContext,
  releases: Uint8Array,
  r: Replay,
): void {
  // Columns in locals: the loop calls into the allocator, so V8 would reload them per entry.
  const { action: actions, size: sizes, stream: streams, length: n } = d.trace;
  const ofEntry = d.allocations.ofEntry;
  const poolOf = ctx.poolOfAllocation;
  const bl = a.blocks;
  const replayMallocReleases = o.recorded && !Number.isFinite(o.settings.maxSplitSize) && !a.gcEnabled;
  const recordedReserved = d.totals.reserved;
  for (let i = 0; i < n; i++) {
    a.entry = i;
    const release = releases[i]!;
    if (release === EMPTY_CACHE || (release === MALLOC_RELEASE && replayMallocReleases)) a.emptyCache();
    const action = actions[i]!;
    const id = ofEntry[i]!;
    switch (action) {
      case Action.alloc:
        a.owner = id;
        blockOf[id] = a.malloc(sizes[i]!, streams[i]!, poolOf[id]!);
        break;
      case Action.free_requested: {
        const b = blockOf[id]!;
        if (b === NONE || bl.state[b] !== ALLOCATED || bl.owner[b] !== id) break;
        const next = i + 1 < n && actions[i + 1] === Action.free_completed && ofEntry[i + 1] === id;
        a.requestFree(b, !next);
        // The usual free: completion right after the request, with nothing to replay between.
        if (next && releases[i + 1] === NO_RELEASE) {
          a.entry = ++i;
          blockOf[id] = NONE;
          a.completeFree(b);
        }
        break;
      }
      case Action.free_completed: {
        const b = blockOf[id]!;
        blockOf[id] = NONE;
        // A flush may have completed it already (the block id may since serve someone else).
        if (b !== NONE && bl.state[b] === PENDING && bl.owner[b] === id) a.completeFree(b);
        break;
      }
      case Action.free: {
        const b = blockOf[id]!;
        blockOf[id] = NONE;
        if (b === NONE || bl.state[b] !== ALLOCATED || bl.owner[b] !== id) break;
        a.requestFree(b, false);
        a.completeFree(b);
        break;
      }
      case Action.oom:
        retryFailedRequest(a, sizes[i]!, streams[i]!, r);
        break;
      default:
        continue; // segment events are compared, not replayed
    }
    if (o.recorded) {
      const dev = Math.abs(a.stats.reserved - recordedReserved[i]!);
      if (dev > r.maxReservedDeviation) {
        r.maxReservedDeviation = dev;
        r.maxDeviationEntry = i;
      }
    }
  }
}

/**
 * A request that failed in the recording (`oom`, rounded size): tried again here. If it fits,
 * the program would have gone on with it; the trace cannot say how, so it is freed at once.
 */
function retryFailedRequest(a: SimAllocator, size: number, stream: number, r: Replay): void {
  a.owner = -1;
  const b = a.malloc(size, stream, 0);
  if (b === NONE) return;
  r.oomsAvoided++;
  a.requestFree(b, false);
  a.completeFree(b);
}

/** Recorded mode: a new segment takes the address of the next recorded segment_alloc of its size. */
class RecordedAddresses implements AddressSource {
  private readonly addrs: number[] = [];
  private readonly sizes: number[] = [];
  private readonly used: boolean[] = [];
  private next = 0;
  private readonly synthetic = new SyntheticAddresses();

  constructor(d: DeviceModel) {
    const t = d.trace;
    for (let i = 0; i < t.length; i++) {
      if (t.action[i] !== Action.segment_alloc) continue;
      this.addrs.push(t.addr[i]!);
      this.sizes.push(t.size[i]!);
      this.used.push(false);
    }
  }

  segment(size: number): number {
    for (let k = this.next; k < Math.min(this.addrs.length, this.next + 8); k++) {
      if (this.used[k] || this.sizes[k] !== size) continue;
      this.used[k] = true;
      while (this.next < this.used.length && this.used[this.next]) this.next++;
      return this.addrs[k]!;
    }
    return this.synthetic.segment(size);
  }

  expandableRange(size: number): number {
    return this.synthetic.expandableRange(size);
  }
}

/** What-if mode: cudaMalloc addresses are unknowable; new memory lands above everything recorded. */
class SyntheticAddresses implements AddressSource {
  private top = SYNTHETIC_BASE;

  segment(size: number): number {
    const addr = this.top;
    this.top += Math.ceil(size / ALIGN) * ALIGN;
    return addr;
  }

  expandableRange(size: number): number {
    return this.segment(size);
  }
}
