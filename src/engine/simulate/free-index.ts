/**
 * Free blocks of one pool and stream ordered by (size, address), as PyTorch's
 * `BlockComparatorSize` orders them within a stream: best fit is a lower bound on size, ties go
 * to the lowest address. Parallel typed arrays keep the binary search in cache; inserts shift
 * with copyWithin, cheap for the few thousand free blocks a pool holds.
 */
export class FreeIndex {
  count = 0;
  private sizes = new Float64Array(16);
  private addrs = new Float64Array(16);
  private ids = new Int32Array(16);

  id(i: number): number {
    return this.ids[i]!;
  }

  size(i: number): number {
    return this.sizes[i]!;
  }

  /** First position with (size, addr) ≥ the key. */
  lowerBound(size: number, addr: number): number {
    const sizes = this.sizes;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = sizes[mid]!;
      if (s < size || (s === size && this.addrs[mid]! < addr)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(id: number, size: number, addr: number): void {
    if (this.count === this.ids.length) this.grow();
    const at = this.lowerBound(size, addr);
    const n = this.count;
    if (at < n) {
      this.sizes.copyWithin(at + 1, at, n);
      this.addrs.copyWithin(at + 1, at, n);
      this.ids.copyWithin(at + 1, at, n);
    }
    this.sizes[at] = size;
    this.addrs[at] = addr;
    this.ids[at] = id;
    this.count = n + 1;
  }

  /** Removes the block with this key; it must be present. */
  remove(id: number, size: number, addr: number): void {
    const at = this.lowerBound(size, addr);
    if (this.ids[at] !== id || at >= this.count) {
      throw new Error(`simulator free index corrupt at block ${id} (0x${addr.toString(16)})`);
    }
    this.removeAt(at);
  }

  removeAt(at: number): void {
    const n = this.count - 1;
    if (at < n) {
      this.sizes.copyWithin(at, at + 1, n + 1);
      this.addrs.copyWithin(at, at + 1, n + 1);
      this.ids.copyWithin(at, at + 1, n + 1);
    }
    this.count = n;
  }

  /** Block ids in order (a copy: callers release blocks while walking it). */
  snapshot(): Int32Array {
    return this.ids.slice(0, this.count);
  }

  private grow(): void {
    const cap = this.ids.length * 2;
    const sizes = new Float64Array(cap);
    const addrs = new Float64Array(cap);
    const ids = new Int32Array(cap);
    sizes.set(this.sizes);
    addrs.set(this.addrs);
    ids.set(this.ids);
    this.sizes = sizes;
    this.addrs = addrs;
    this.ids = ids;
  }
}
