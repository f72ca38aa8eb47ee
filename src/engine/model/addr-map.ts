/**
 * Address → int map on typed arrays. CUDA addresses are ~2^47, beyond V8's small integers, so a
 * JS Map boxes every key; pairing 10M allocs and frees through one costs seconds. Open addressing
 * with backward-shift deletion: no tombstones, so a long trace never degrades the table.
 */
const EMPTY = -1;

export class AddrMap {
  size = 0;
  private keys: Float64Array;
  private values: Int32Array;
  private mask: number;

  constructor(capacity = 1024) {
    let n = 16;
    while (n < capacity * 2) n *= 2;
    this.keys = new Float64Array(n);
    this.values = new Int32Array(n).fill(EMPTY);
    this.mask = n - 1;
  }

  get(key: number): number | undefined {
    for (let i = this.slot(key); ; i = (i + 1) & this.mask) {
      const v = this.values[i]!;
      if (v === EMPTY) return undefined;
      if (this.keys[i] === key) return v;
    }
  }

  /** `value` must be ≥ 0. */
  set(key: number, value: number): void {
    this.put(key, value);
  }

  /** set() that returns the value it replaced: one probe where get() then set() take two. */
  put(key: number, value: number): number | undefined {
    for (let i = this.slot(key); ; i = (i + 1) & this.mask) {
      const v = this.values[i]!;
      if (v === EMPTY) {
        this.keys[i] = key;
        this.values[i] = value;
        if (++this.size * 2 > this.mask) this.grow();
        return undefined;
      }
      if (this.keys[i] === key) {
        this.values[i] = value;
        return v;
      }
    }
  }

  delete(key: number): void {
    this.take(key);
  }

  /** delete() that returns the value it removed: one probe where get() then delete() take two. */
  take(key: number): number | undefined {
    let i = this.slot(key);
    for (; ; i = (i + 1) & this.mask) {
      if (this.values[i] === EMPTY) return undefined;
      if (this.keys[i] === key) break;
    }
    const taken = this.values[i]!;
    this.size--;
    // Backward shift: pull later entries of the probe run into the hole.
    for (let j = (i + 1) & this.mask; this.values[j] !== EMPTY; j = (j + 1) & this.mask) {
      const home = this.slot(this.keys[j]!);
      const between = i <= j ? home > i && home <= j : home > i || home <= j;
      if (between) continue;
      this.keys[i] = this.keys[j]!;
      this.values[i] = this.values[j]!;
      i = j;
    }
    this.values[i] = EMPTY;
    return taken;
  }

  forEachValue(f: (value: number) => void): void {
    for (let i = 0; i <= this.mask; i++) if (this.values[i] !== EMPTY) f(this.values[i]!);
  }

  private slot(key: number): number {
    // Not key % 2^32: a double's % is a call to fmod, the costliest step of pairing a trace.
    // Blocks are 512-byte aligned: address bits 9-40 in one exact division and one truncation
    // (`| 0` is ToInt32, i.e. modulo 2^32). Hashing the low and the high word apart took a second
    // truncation and a multiply: pairing a 7.5M-entry trace without a table (a summary's) took
    // 85 ms of CPU against 70 now. Addresses alike in those bits lie 2 TiB apart: user-space
    // addresses are below 2^47, so at most 64 share a hash (and probe on).
    const h = Math.imul((key / 512) | 0, 0x9e3779b1);
    return (h ^ (h >>> 16)) & this.mask;
  }

  private grow(): void {
    const { keys, values } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.values = new Int32Array(values.length * 2).fill(EMPTY);
    this.mask = this.keys.length - 1;
    this.size = 0;
    for (let i = 0; i < keys.length; i++) if (values[i] !== EMPTY) this.set(keys[i]!, values[i]!);
  }
}
