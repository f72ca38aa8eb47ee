/**
 * Free blocks of one pool and stream ordered by (size, address), as PyTorch's
 * `BlockComparatorSize` orders them within a stream: best fit is a lower bound on size, ties go
 * to the lowest address. Entries are (size, address, id) triples in one Float64Array, so the
 * binary search stays in cache and a shift is one copyWithin; `replaceAt` moves an entry to its
 * new key in a single shift (a split remainder, a merged block), which is most of the traffic.
 */
import type { BlockStore } from './block-store.js';

export class FreeIndex {
  count = 0;
  private data = new Float64Array(48);

  // Methods take block ids and read keys from the store: addresses are not small integers, and
  // passing them to a call V8 does not inline would box each one.
  constructor(private readonly blocks: BlockStore) {}

  id(i: number): number {
    return this.data[3 * i + 2]!;
  }

  size(i: number): number {
    return this.data[3 * i]!;
  }

  /** First position with (size, addr) ≥ the key. */
  lowerBound(size: number, addr: number): number {
    const d = this.data;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = d[3 * mid]!;
      if (s < size || (s === size && d[3 * mid + 1]! < addr)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(id: number): void {
    if (3 * this.count === this.data.length) this.grow();
    const at = this.lowerBound(this.blocks.size[id]!, this.blocks.addr[id]!);
    const d = this.data;
    if (at < this.count) d.copyWithin(3 * at + 3, 3 * at, 3 * this.count);
    this.put(at, id);
    this.count++;
  }

  /** Position of the block with this key; it must be present. */
  find(id: number): number {
    const at = this.lowerBound(this.blocks.size[id]!, this.blocks.addr[id]!);
    if (at >= this.count || this.data[3 * at + 2] !== id) {
      throw new Error(`simulator free index corrupt at block ${id}`);
    }
    return at;
  }

  remove(id: number): void {
    this.removeAt(this.find(id));
  }

  removeAt(at: number): void {
    const n = this.count - 1;
    if (at < n) this.data.copyWithin(3 * at, 3 * at + 3, 3 * n + 3);
    this.count = n;
  }

  /** Replaces the entry at `q` by another key: one shift between the old and the new position. */
  replaceAt(q: number, id: number): void {
    const p = this.lowerBound(this.blocks.size[id]!, this.blocks.addr[id]!);
    const d = this.data;
    if (p > q) {
      d.copyWithin(3 * q, 3 * q + 3, 3 * p);
      this.put(p - 1, id);
    } else {
      if (p < q) d.copyWithin(3 * p + 3, 3 * p, 3 * q);
      this.put(p, id);
    }
  }

  /** Block ids in order (a copy: callers release blocks while walking it). */
  snapshot(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.data[3 * i + 2]!);
    return out;
  }

  private put(at: number, id: number): void {
    const d = this.data;
    d[3 * at] = this.blocks.size[id]!;
    d[3 * at + 1] = this.blocks.addr[id]!;
    d[3 * at + 2] = id;
  }

  private grow(): void {
    const d = new Float64Array(this.data.length * 2);
    d.set(this.data);
    this.data = d;
  }
}
