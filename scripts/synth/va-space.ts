/**
 * Device virtual addresses handed out by "cudaMalloc": first fit, so a freed segment's range is
 * reused by later segments, as the CUDA driver does; decoders keyed by address must cope.
 */
export class VaSpace {
  /** Free ranges sorted by address, never adjacent. */
  private readonly ranges: { addr: number; size: number }[];

  constructor(base: number, size: number) {
    this.ranges = [{ addr: base, size }];
  }

  alloc(size: number): number | null {
    for (let i = 0; i < this.ranges.length; i++) {
      const r = this.ranges[i]!;
      if (r.size < size) continue;
      const addr = r.addr;
      r.addr += size;
      r.size -= size;
      if (r.size === 0) this.ranges.splice(i, 1);
      return addr;
    }
    return null;
  }

  release(addr: number, size: number): void {
    let i = 0;
    while (i < this.ranges.length && this.ranges[i]!.addr < addr) i++;
    this.ranges.splice(i, 0, { addr, size });
    this.mergeAt(i);
    if (i > 0) this.mergeAt(i - 1);
  }

  private mergeAt(i: number): void {
    const a = this.ranges[i]!;
    const b = this.ranges[i + 1];
    if (b !== undefined && a.addr + a.size === b.addr) {
      a.size += b.size;
      this.ranges.splice(i + 1, 1);
    }
  }
}
