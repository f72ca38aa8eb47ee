/** Blocks, segments and pools of the allocator model (allocator-spec §1). */
import type { Stack } from './frames.js';

export const FREE = 0;
export const ALLOCATED = 1;
export const PENDING = 2;
export type BlockState = typeof FREE | typeof ALLOCATED | typeof PENDING;

export class Block {
  prev: Block | null = null;
  next: Block | null = null;
  state: BlockState = FREE;
  /** Requested bytes of the last allocation served; stale once free, 0 for a never-used remainder. */
  requested = 0;
  /** False only for the unmapped parts of an expandable segment. */
  mapped = true;
  /** Traceback of the allocation that owns the block (ALLOCATED / PENDING). */
  capture = 0;
  stack: Stack | null = null;
  /** Last allocation served, kept after the free for the PyTorch 2.0 `history` field. */
  history: { addr: number; requested: number; stack: Stack | null } | null = null;

  constructor(
    public addr: number,
    public size: number,
    readonly segment: Segment,
  ) {}

  get isFree(): boolean {
    return this.state === FREE && this.mapped;
  }
}

export interface Pool {
  /** 0: default pool; 1: the private (graph) pool. */
  readonly index: number;
  readonly id: readonly [number, number];
  readonly small: boolean;
  /** Free mapped blocks per stream. */
  readonly free: Map<number, FreeList>;
}

export class Segment {
  head: Block;

  constructor(
    readonly addr: number,
    /** cudaMalloc size, or the whole reserved VA range of an expandable segment. */
    readonly size: number,
    readonly stream: number,
    readonly pool: Pool,
    readonly expandable: boolean,
    /** Traceback of the allocation that caused the cudaMalloc (0 / null for expandable). */
    readonly capture: number,
    readonly stack: Stack | null,
  ) {
    this.head = new Block(addr, size, this);
  }

  *blocks(): IterableIterator<Block> {
    for (let b: Block | null = this.head; b !== null; b = b.next) yield b;
  }
}

/**
 * Free blocks of one pool and stream, sorted by (size, address): the allocator takes the
 * smallest block that fits, lowest address on ties. A sorted array suffices because a pool
 * holds at most a few thousand free blocks.
 */
export class FreeList {
  private readonly items: Block[] = [];

  get size(): number {
    return this.items.length;
  }

  all(): readonly Block[] {
    return this.items;
  }

  // Manual shifting: splice allocates a result array on every call, and these run per event.
  insert(b: Block): void {
    const items = this.items;
    let i = items.length;
    const at = this.lowerBound(b.size, b.addr);
    items.push(b);
    for (; i > at; i--) items[i] = items[i - 1]!;
    items[at] = b;
  }

  remove(b: Block): void {
    const items = this.items;
    const at = this.lowerBound(b.size, b.addr);
    if (items[at] !== b) throw new Error(`free list corrupt at 0x${b.addr.toString(16)}`);
    for (let i = at + 1; i < items.length; i++) items[i - 1] = items[i]!;
    items.pop();
  }

  /**
   * `get_free_block`'s choice (allocator-spec §3.1): the smallest block that fits, except that a
   * block of an expandable segment is weighed by what it could grow to (its size plus the
   * unmapped range right after it), so the free block before the growable tail is kept for
   * requests that need it. PyTorch walks up the (size, address) order while the next block
   * weighs less than the current one and takes the block where the walk stops: it compares
   * neighbours only, so that block need not be the lightest of all.
   */
  bestFit(size: number): Block | null {
    const items = this.items;
    let i = this.lowerBound(size, 0);
    while (
      i + 1 < items.length &&
      items[i]!.segment.expandable &&
      growableSize(items[i + 1]!) < growableSize(items[i]!)
    )
      i++;
    return items[i] ?? null;
  }

  private lowerBound(size: number, addr: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const m = this.items[mid]!;
      if (m.size < size || (m.size === size && m.addr < addr)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A free block's size plus the unmapped range after it, which mapping pages would add to it. */
function growableSize(b: Block): number {
  const next = b.next;
  return next !== null && !next.mapped ? b.size + next.size : b.size;
}

export function freeListOf(pool: Pool, stream: number): FreeList {
  let list = pool.free.get(stream);
  if (list === undefined) {
    list = new FreeList();
    pool.free.set(stream, list);
  }
  return list;
}
