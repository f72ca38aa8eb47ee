import type { Allocations } from './allocations.js';

/**
 * Which allocations are alive after any trace entry, without replaying the whole trace: the live
 * set is saved every `stride` entries and a query replays at most `stride` entries from the
 * nearest checkpoint. The stride adapts so checkpoints take about CHECKPOINT_BUDGET ids in all.
 */
const CHECKPOINT_BUDGET = 16 * 1024 * 1024;
const MIN_STRIDE = 1024;

export class LiveIndex {
  readonly stride: number;
  private readonly checkpoints: Int32Array[] = [];

  constructor(
    private readonly allocs: Allocations,
    private readonly entries: number,
    peakLive: number,
  ) {
    this.stride = Math.max(MIN_STRIDE, Math.ceil((entries * Math.max(1, peakLive)) / CHECKPOINT_BUDGET));
    this.build();
  }

  /** Allocation ids alive after entry `k` (k = -1: before the first entry), ascending. */
  aliveAfter(k: number): Int32Array {
    const at = Math.max(-1, Math.min(k, this.entries - 1));
    const c = Math.floor((at + 1) / this.stride);
    const live = new Set(this.checkpoints[c]);
    for (let i = c * this.stride; i <= at; i++) this.step(live, i);
    return Int32Array.from(live).sort();
  }

  private build(): void {
    const live = new Set<number>();
    const a = this.allocs;
    for (let id = 0; id < a.count; id++) if (a.start[id] === -1 && a.end[id] !== -1) live.add(id);
    for (let i = 0; i < this.entries; i++) {
      if (i % this.stride === 0) this.checkpoints.push(Int32Array.from(live));
      this.step(live, i);
    }
    if (this.entries % this.stride === 0) this.checkpoints.push(Int32Array.from(live));
  }

  private step(live: Set<number>, i: number): void {
    const id = this.allocs.ofEntry[i]!;
    if (id < 0) return;
    if (this.allocs.start[id] === i) live.add(id);
    if (this.allocs.end[id] === i) live.delete(id);
  }
}
