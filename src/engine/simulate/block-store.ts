/**
 * Blocks and segments of the simulated allocator (allocator-spec §1) as typed-array columns:
 * a 10M-event replay creates millions of blocks, so no object per block. Freed ids are reused.
 */

export const FREE = 0;
export const ALLOCATED = 1;
/** Freed by the user, not yet reusable (record_stream events outstanding). */
export const PENDING = 2;
/** The unmapped part of an expandable segment's address range. */
export const UNMAPPED = 3;

export const NONE = -1;

export class BlockStore {
  addr = new Float64Array(1024);
  size = new Float64Array(1024);
  requested = new Float64Array(1024);
  prev = new Int32Array(1024);
  next = new Int32Array(1024);
  state = new Uint8Array(1024);
  /** Pool index: private pool index × 2 + (small ? 1 : 0). */
  pool = new Uint16Array(1024);
  stream = new Uint16Array(1024);
  segment = new Int32Array(1024);
  /** Allocation id (model/allocations.ts) the block serves; -1 when free. */
  owner = new Int32Array(1024);
  /** The pool's get_free_block counter when the block entered the free set (GC age). */
  gcBase = new Float64Array(1024);
  private free: number[] = [];
  private used = 0;

  newBlock(addr: number, size: number, segment: number, pool: number, stream: number, state: number): number {
    const id = this.newId(segment, pool, stream, state);
    this.addr[id] = addr;
    this.size[id] = size;
    return id;
  }

  /** A block with address and size still to set (the hot split path writes them directly). */
  private newId(segment: number, pool: number, stream: number, state: number): number {
    const id = this.free.length > 0 ? this.free.pop()! : this.used++;
    if (id >= this.addr.length) this.grow();
    this.requested[id] = 0;
    this.prev[id] = NONE;
    this.next[id] = NONE;
    this.state[id] = state;
    this.pool[id] = pool;
    this.stream[id] = stream;
    this.segment[id] = segment;
    this.owner[id] = -1;
    this.gcBase[id] = 0;
    return id;
  }

  release(id: number): void {
    this.free.push(id);
  }

  isSplit(id: number): boolean {
    return this.prev[id] !== NONE || this.next[id] !== NONE;
  }

  /** Cuts `b` at `offset`: `b` keeps the low part, the returned block (same state) the high part. */
  splitOff(b: number, offset: number): number {
    const rest = this.newId(this.segment[b]!, this.pool[b]!, this.stream[b]!, this.state[b]!);
    this.addr[rest] = this.addr[b]! + offset;
    this.size[rest] = this.size[b]! - offset;
    const next = this.next[b]!;
    this.prev[rest] = b;
    this.next[rest] = next;
    if (next !== NONE) this.prev[next] = rest;
    this.next[b] = rest;
    this.size[b] = offset;
    return rest;
  }

  /** Folds neighbour `src` into `dst` (adjacent, same segment); `src` is recycled. */
  absorb(dst: number, src: number): void {
    if (this.next[src] === dst) {
      this.addr[dst] = this.addr[src]!;
      const p = this.prev[src]!;
      this.prev[dst] = p;
      if (p !== NONE) this.next[p] = dst;
    } else {
      const n = this.next[src]!;
      this.next[dst] = n;
      if (n !== NONE) this.prev[n] = dst;
    }
    this.size[dst] = this.size[dst]! + this.size[src]!;
    this.release(src);
  }

  private grow(): void {
    const cap = this.addr.length * 2;
    this.addr = grown(this.addr, cap);
    this.size = grown(this.size, cap);
    this.requested = grown(this.requested, cap);
    this.prev = grown(this.prev, cap);
    this.next = grown(this.next, cap);
    this.state = grown(this.state, cap);
    this.pool = grown(this.pool, cap);
    this.stream = grown(this.stream, cap);
    this.segment = grown(this.segment, cap);
    this.owner = grown(this.owner, cap);
    this.gcBase = grown(this.gcBase, cap);
  }
}

/** Segments: one cudaMalloc range, or one expandable segment's whole reserved VA range. */
export class SegmentStore {
  addr: number[] = [];
  size: number[] = [];
  pool: number[] = [];
  stream: number[] = [];
  expandable: boolean[] = [];
  /** First block (lowest address); NONE once the segment is released. */
  head: number[] = [];
  /** Trace entry whose request created the segment. */
  entry: number[] = [];
  live = 0;
  /** Set once an expandable segment exists: until then best fit skips the expandable checks. */
  anyExpandable = false;

  add(addr: number, size: number, pool: number, stream: number, expandable: boolean, entry: number): number {
    const id = this.addr.length;
    this.addr.push(addr);
    this.size.push(size);
    this.pool.push(pool);
    this.stream.push(stream);
    this.expandable.push(expandable);
    if (expandable) this.anyExpandable = true;
    this.head.push(NONE);
    this.entry.push(entry);
    this.live++;
    return id;
  }

  drop(id: number): void {
    this.head[id] = NONE;
    this.live--;
  }
}

export type Column = Float64Array | Int32Array | Uint8Array | Uint16Array;

/** A copy of `a` with room for `cap` elements. */
export function grown<T extends Column>(a: T, cap: number): T {
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}
