import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';
import { formatFrame } from '../frames/short-path.js';
import { topUserFrame } from '../frames/user-frames.js';
import { releasedAt } from '../state/lifetimes.js';

/** Gaps between a periodic site's allocations may vary this much (stddev / mean) and still count. */
const MAX_PERIOD_VARIATION = 0.25;
/** Iterations of a loop release most of what they allocate within the next iteration. */
const MAX_HELD_SHARE = 0.5;
/** Candidates tried before giving up. */
const MAX_CANDIDATES = 8;

export interface PeriodicAnchors {
  /** Entries that begin an iteration. */
  starts: number[];
  marker: string;
}

/**
 * A training loop replays the same code every step, so some call site allocates exactly once per
 * step at a near-constant distance in entries. Among the allocating sites whose allocations
 * span most of the trace at regular intervals, the one seen most often gives the period (a site
 * hit twice per step is irregular: short gap, long gap); ties go to the site that allocates
 * when the allocated curve is lowest, i.e. nearest the start of a step.
 *
 * A regular site can also be an inner loop (layers of one forward pass, parameters of one
 * optimizer step) when the trace holds a single step. "Iterations" that hand on most of what
 * they allocate (saved activations layer after layer, optimizer state parameter after
 * parameter) are rejected: they would fake a leak. An inner loop that releases everything
 * (the layers of an inference pass) cannot be told from steps by the trace alone.
 */
export function periodicAnchors(s: Snapshot, d: DeviceModel): PeriodicAnchors | { why: string } {
  const t = d.trace;
  const n = t.length;
  const keys = allocKeys(d);
  const stats = new PeriodStats(keys.count);
  for (let i = 0; i < n; i++) {
    const k = keys.of[i]!;
    if (k >= 0) stats.add(k, i, i > 0 ? d.totals.allocated[i - 1]! : d.totals.start.allocated);
  }
  const candidates = stats.candidates(n).slice(0, MAX_CANDIDATES);
  for (const key of candidates) {
    const starts: number[] = [];
    for (let i = 0; i < n; i++) if (keys.of[i] === key) starts.push(i);
    if (heldShare(d, starts) > MAX_HELD_SHARE) continue;
    const where = keys.describe(key, s);
    return { starts, marker: `an allocation at ${where} every ~${stats.meanGap(key)} entries` };
  }
  return {
    why:
      candidates.length === 0
        ? 'no site allocates at a regular interval across most of the trace'
        : `${candidates.length} regular sites, each an inner loop that hands on most of what it allocates (layers, parameters), not steps`,
  };
}

/** Share of the bytes allocated in iteration k still held when iteration k+1 ends. */
function heldShare(d: DeviceModel, starts: number[]): number {
  const a = d.allocations;
  let k = 0;
  let allocated = 0;
  let held = 0;
  for (let id = 0; id < a.count; id++) {
    const start = a.start[id]!;
    if (start < starts[0]!) continue;
    while (k + 1 < starts.length && starts[k + 1]! <= start) k++;
    if (k + 2 >= starts.length) break;
    allocated += a.size[id]!;
    if (releasedAt(a, id) >= starts[k + 2]!) held += a.size[id]!;
  }
  return allocated > 0 ? held / allocated : 0;
}

interface AllocKeys {
  count: number;
  /** Key of each entry (-1: not an alloc). */
  of: Int32Array;
  describe(key: number, s: Snapshot): string;
}

/** Allocs keyed by stack id; when the trace has no stacks, by requested size instead. */
function allocKeys(d: DeviceModel): AllocKeys {
  const t = d.trace;
  const of = new Int32Array(t.length).fill(-1);
  let withStack = 0;
  for (let i = 0; i < t.length; i++) if (t.action[i] === Action.alloc && t.stack[i]! >= 0) withStack++;
  if (withStack > 0) {
    let count = 0;
    for (let i = 0; i < t.length; i++) {
      if (t.action[i] !== Action.alloc || t.stack[i]! < 0) continue;
      of[i] = t.stack[i]!;
      count = Math.max(count, of[i]! + 1);
    }
    return { count, of, describe: (k, s) => frameText(s, k) };
  }
  const sizes = new Map<number, number>();
  for (let i = 0; i < t.length; i++) {
    if (t.action[i] !== Action.alloc) continue;
    let k = sizes.get(t.size[i]!);
    if (k === undefined) {
      k = sizes.size;
      sizes.set(t.size[i]!, k);
    }
    of[i] = k;
  }
  const sizeOf = [...sizes.keys()];
  return { count: sizes.size, of, describe: (k) => `a site of ${sizeOf[k]} bytes (no stacks recorded)` };
}

function frameText(s: Snapshot, stack: number): string {
  const f = topUserFrame(s.stacks.frames(stack));
  return f === undefined ? 'an unknown site' : formatFrame(f);
}

/** Per key: occurrences, span, and the mean and variance of the gaps (Welford). */
class PeriodStats {
  private readonly count: Int32Array;
  private readonly first: Int32Array;
  private readonly last: Int32Array;
  private readonly mean: Float64Array;
  private readonly m2: Float64Array;
  private readonly level: Float64Array;

  constructor(keys: number) {
    this.count = new Int32Array(keys);
    this.first = new Int32Array(keys);
    this.last = new Int32Array(keys);
    this.mean = new Float64Array(keys);
    this.m2 = new Float64Array(keys);
    this.level = new Float64Array(keys);
  }

  add(k: number, i: number, allocatedBefore: number): void {
    const c = this.count[k]!++;
    this.level[k]! += allocatedBefore;
    if (c === 0) {
      this.first[k] = i;
      this.last[k] = i;
      return;
    }
    const gap = i - this.last[k]!;
    this.last[k] = i;
    const delta = gap - this.mean[k]!;
    this.mean[k]! += delta / c;
    this.m2[k]! += delta * (gap - this.mean[k]!);
  }

  meanGap(k: number): number {
    return Math.round(this.mean[k]!);
  }

  /** Regular keys spanning at least half the trace, most frequent first. */
  candidates(n: number): number[] {
    const keys: number[] = [];
    for (let k = 0; k < this.count.length; k++) if (this.regular(k, n)) keys.push(k);
    return keys.sort((x, y) => (this.better(x, y) ? -1 : this.better(y, x) ? 1 : 0));
  }

  private regular(k: number, n: number): boolean {
    const c = this.count[k]!;
    if (c < 3 || 2 * (this.last[k]! - this.first[k]!) < n) return false;
    const sd = Math.sqrt(this.m2[k]! / (c - 1));
    return sd <= MAX_PERIOD_VARIATION * this.mean[k]!;
  }

  private better(k: number, than: number): boolean {
    const c = this.count[k]!;
    const b = this.count[than]!;
    if (c !== b) return c > b;
    return this.level[k]! / c < this.level[than]! / b;
  }
}
