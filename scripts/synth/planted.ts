/**
 * Memory problems planted in the training loop, with their ground truth, for the leak and gc
 * analyses:
 * - a leak: every step keeps one more tensor of `leakBytes` (`losses.append(loss * 1)` at
 *   train.py:218, right after the forward pass), never freed;
 * - reference cycles: every step makes tensors of `cycleBytes` (model.py:176) that only Python's
 *   cycle collector can free; `gc.collect()` at the top of every `gcEvery`-th step
 *   (train.py:207) frees all of them at once, with free stacks through the collector.
 * With neither option the loop is untouched: no event, no clock tick, no random draw.
 */
import type { Allocator } from './allocator.js';
import type { Block } from './blocks.js';
import type { CallSites } from './callsites.js';
import type { Clock } from './events.js';
import { type ExtraBufferFacts, plantExtraBuffer } from './rank-plant.js';

export interface PlantOptions {
  /** Bytes of the tensor kept every step (0: no leak). */
  readonly leakBytes: number;
  /** Sizes of the tensors caught in reference cycles every step (empty: none). */
  readonly cycleBytes: readonly number[];
  /** gc.collect() at the top of every this-many-th step. */
  readonly gcEvery: number;
  /** A rank's extra buffer allocated at the top of this step and kept (null: none, or at start-up). */
  readonly extraBuffer?: { readonly extraBuffer: number; readonly extraBufferStep: number | null } | null;
}

export interface PlantedBurst {
  /** The step whose top ran gc.collect(). */
  readonly iteration: number;
  /** Index of the burst's first event in the device's whole trace, and its time_us. */
  readonly entry: number;
  readonly timeUs: number;
  readonly count: number;
  readonly bytes: number;
}

export interface PlantedFacts {
  /** Steps begun (ProfilerStep#0 … #iterations-1). */
  iterations: number;
  /** Steps that kept a leaked tensor, and its size. */
  readonly leakIterations: number[];
  readonly leakBytes: number;
  readonly bursts: PlantedBurst[];
  /** Cycle tensors still waiting for a collection when the trace ends. */
  cycleHeld: number;
}

export class Plants {
  readonly facts: PlantedFacts;
  private held: Block[] = [];
  /** The extra buffer once planted at the top of its step. */
  extraBuffer: ExtraBufferFacts | null = null;

  constructor(
    private readonly a: Allocator,
    private readonly clock: Clock,
    private readonly sites: CallSites,
    private readonly o: PlantOptions,
  ) {
    this.facts = { iterations: 0, leakIterations: [], leakBytes: o.leakBytes, bursts: [], cycleHeld: 0 };
  }

  get enabled(): boolean {
    return this.o.leakBytes > 0 || this.o.cycleBytes.length > 0;
  }

  /** Top of step `n`: the periodic gc.collect(), and the extra buffer if this is its step. */
  collect(n: number): void {
    this.facts.iterations = n + 1;
    const extra = this.o.extraBuffer;
    if (extra && extra.extraBuffer > 0 && extra.extraBufferStep === n)
      this.extraBuffer = plantExtraBuffer(this.a, this.sites, extra.extraBuffer);
    if (this.held.length === 0 || n % this.o.gcEvery !== 0) return;
    const entry = this.a.emitted;
    const timeUs = this.clock.now;
    let bytes = 0;
    for (const b of this.held) {
      bytes += b.requested;
      this.a.free(b, this.sites.gcFree());
      this.clock.advance(1);
    }
    this.facts.bursts.push({ iteration: n, entry, timeUs, count: this.held.length, bytes });
    this.held = [];
    this.facts.cycleHeld = 0;
  }

  /** After step `n`'s forward pass: the kept tensor and this step's cycle garbage. */
  keep(n: number): void {
    if (this.o.leakBytes > 0) {
      this.a.malloc(this.o.leakBytes, 0, 0, this.sites.alloc('keep_loss', 'mul'));
      this.facts.leakIterations.push(n);
      this.clock.advance(2);
    }
    for (const bytes of this.o.cycleBytes) {
      this.held.push(this.a.malloc(bytes, 0, 0, this.sites.alloc('cycle', 'clone')));
      this.clock.advance(2);
    }
    this.facts.cycleHeld = this.held.length;
  }
}
