import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { CATEGORIES, type Category, labelAllocations, RULES } from './categories.js';

export interface CategoryFigures {
  category: Category;
  /** Live (allocated, requested) bytes at the moment allocated memory peaked. */
  peak_bytes: number;
  dump_bytes: number;
  max_bytes: number;
  /** Entry after which this category was largest (-1: before the first entry). */
  max_after_entry: number;
  allocations: number;
  /** The rules that labelled this category's allocations (RuleCount.rule), most bytes first. */
  rules: string[];
}

export interface RuleCount {
  rule: string;
  category: Category;
  says: string;
  allocations: number;
  /** Requested bytes of all allocations the rule labelled (over the whole window). */
  bytes: number;
}

/**
 * The curve, `points` buckets of consecutive moments (moment 0: before the first entry, moment
 * i+1: after entry i); each value is the largest live bytes of the category inside the bucket,
 * so no peak is lost to downsampling.
 */
export interface CategoryCurve {
  points: number;
  first_entry: number[];
  last_entry: number[];
  time_us: (number | null)[];
  bytes: Record<Category, number[]>;
}

export interface DeviceCategories {
  device: number;
  peak_after_entry: number;
  categories: CategoryFigures[];
  rules: RuleCount[];
  curve: CategoryCurve;
}

/** Live bytes by category over the trace, in one pass over the entries. */
export function categoriesOf(s: Snapshot, d: DeviceModel, points: number): DeviceCategories {
  const a = d.allocations;
  const labels = labelAllocations(s, d);
  const k = CATEGORIES.length;
  const cur = new Float64Array(k);
  const rules = RULES.map((r) => ({
    rule: r.id,
    category: r.category,
    says: r.says,
    allocations: 0,
    bytes: 0,
  }));
  const counts = new Float64Array(k);
  for (let id = 0; id < a.count; id++) {
    const c = labels.category[id]!;
    counts[c]!++;
    rules[labels.rule[id]!]!.allocations++;
    rules[labels.rule[id]!]!.bytes += a.size[id]!;
    if (a.start[id] === -1 && a.freeRequested[id] !== FREED_BEFORE_WINDOW) cur[c]! += a.size[id]!;
  }
  const n = d.trace.length;
  const peakAt = d.totals.peakAllocatedAt;
  const max = Float64Array.from(cur);
  const maxAt = new Int32Array(k).fill(-1);
  let atPeak = peakAt < 0 ? Float64Array.from(cur) : new Float64Array(k);
  const curve = new CurveBuilder(d, Math.max(1, Math.min(points, n + 1)));
  curve.add(0, cur, -1);
  for (let i = 0; i < n; i++) {
    const id = a.ofEntry[i]!;
    const c = id >= 0 ? labels.category[id]! : -1;
    if (id >= 0) {
      if (a.start[id] === i) cur[c]! += a.size[id]!;
      if (a.freeRequested[id] === i) cur[c]! -= a.size[id]!;
      if (cur[c]! > max[c]!) {
        max[c] = cur[c]!;
        maxAt[c] = i;
      }
    }
    if (i === peakAt) atPeak = Float64Array.from(cur);
    curve.add(i + 1, cur, c);
  }
  return {
    device: d.device,
    peak_after_entry: peakAt,
    categories: CATEGORIES.map((category, c) => ({
      category,
      peak_bytes: atPeak[c]!,
      dump_bytes: cur[c]!,
      max_bytes: max[c]!,
      max_after_entry: maxAt[c]!,
      allocations: counts[c]!,
      rules: rules
        .filter((r) => r.category === category && r.allocations > 0)
        .sort((x, y) => y.bytes - x.bytes || y.allocations - x.allocations)
        .map((r) => r.rule),
    })),
    rules: rules.filter((r) => r.allocations > 0),
    curve: curve.result(),
  };
}

class CurveBuilder {
  private readonly moments: number;
  private readonly values: Float64Array[];
  private readonly first: number[];
  private readonly last: number[];
  private bucket = -1;
  private bucketEnd = 0;

  constructor(
    private readonly d: DeviceModel,
    private readonly points: number,
  ) {
    this.moments = d.trace.length + 1;
    this.values = CATEGORIES.map(() => new Float64Array(points));
    this.first = new Array<number>(points).fill(0);
    this.last = new Array<number>(points).fill(0);
  }

  /**
   * The figures at `moment`, where only category `changed` (-1: none) moved since the last: the
   * others' maxima in the bucket stand, so an entry costs one comparison, not one per category.
   */
  add(moment: number, cur: Float64Array, changed: number): void {
    if (moment >= this.bucketEnd) {
      this.bucket++;
      this.bucketEnd = Math.floor(((this.bucket + 1) * this.moments) / this.points);
      this.first[this.bucket] = moment - 1;
      for (let c = 0; c < cur.length; c++) this.values[c]![this.bucket] = cur[c]!;
    } else if (changed >= 0 && cur[changed]! > this.values[changed]![this.bucket]!)
      this.values[changed]![this.bucket] = cur[changed]!;
    this.last[this.bucket] = moment - 1;
  }

  result(): CategoryCurve {
    const t = this.d.trace.timeUs;
    const time = this.first.map((e) => {
      const v = t[Math.max(0, e)];
      return v === undefined || Number.isNaN(v) ? null : v;
    });
    const bytes = Object.fromEntries(CATEGORIES.map((c, i) => [c, Array.from(this.values[i]!)])) as Record<
      Category,
      number[]
    >;
    return { points: this.points, first_entry: this.first, last_entry: this.last, time_us: time, bytes };
  }
}
