/**
 * A small model of PyTorch's CUDA caching allocator (allocator-spec §1-4, default settings):
 * 512-byte rounding, small/large pools per stream, best fit, splitting and coalescing, new
 * segments when nothing fits, segments released by empty_cache. It follows the spec's rules for
 * those settings (the simulator replays generated files event for event, test/simulate-fidelity);
 * the paths that only other settings reach (max_split_size, GC, memory fraction) are absent.
 * Every event it emits is consistent with the state it keeps, so the final segments are exactly
 * what replaying the trace gives.
 */
import { ALLOCATED, Block, FREE, freeListOf, PENDING, type Pool, Segment } from './blocks.js';
import {
  ALLOC,
  type Clock,
  FREE_COMPLETED,
  FREE_REQUESTED,
  OOM,
  SEGMENT_ALLOC,
  SEGMENT_FREE,
  type SimEvent,
} from './events.js';
import { ExpandableSegments } from './expandable.js';
import type { Stack } from './frames.js';
import { allocationSize, isSmall, roundSize, shouldSplit } from './sizes.js';
import { VaSpace } from './va-space.js';

export interface AllocatorConfig {
  /** Device memory (cudaMemGetInfo total). */
  totalMemory: number;
  /** Memory held outside the allocator (CUDA context, other libraries). */
  outsideMemory: number;
  /** Base of this device's virtual address range. */
  vaBase: number;
  expandable: boolean;
  /** Number of pools: 1 (default only) or 2 (default + one private pool). */
  poolCount: number;
  /** Bytes added to every request before rounding: 32 on torch_npu (`AddPadSize`), 0 on CUDA. */
  pad?: number;
}

/** Id of the private pool as `graph_pool_handle()` / `MemPool()` numbers it. */
const PRIVATE_POOL_ID: readonly [number, number] = [0, 1];
const VA_CLASSIC_SIZE = 2 ** 39;

interface PendingFree {
  readonly block: Block;
  /** Completed by the first malloc once this many mallocs have started; Infinity: never. */
  readonly due: number;
}

export class Allocator {
  readonly segments = new Set<Segment>();
  readonly pools: Pool[] = [];
  /** Events emitted since the caller last drained them. */
  queue: SimEvent[] = [];
  /** Events emitted so far; with `countOnly` nothing else is kept (the first pass needs no events). */
  emitted = 0;
  countOnly = false;
  /** Bytes obtained from CUDA (cudaMalloc'd segments + mapped pages). */
  reserved = 0;
  /** Requested bytes of the blocks in state active_allocated (the trace's allocated curve). */
  allocatedRequested = 0;
  private pending: PendingFree[] = [];
  private mallocs = 0;
  private nextCapture = 1;
  private readonly va: VaSpace;
  private readonly expandable: ExpandableSegments | null;

  constructor(
    readonly config: AllocatorConfig,
    private readonly clock: Clock,
  ) {
    for (let p = 0; p < config.poolCount; p++) {
      const id = p === 0 ? ([0, 0] as const) : PRIVATE_POOL_ID;
      this.pools.push(
        { index: p, id, small: false, free: new Map() },
        { index: p, id, small: true, free: new Map() },
      );
    }
    this.va = new VaSpace(config.vaBase, VA_CLASSIC_SIZE);
    this.expandable = config.expandable
      ? new ExpandableSegments(this, config.vaBase + VA_CLASSIC_SIZE)
      : null;
  }

  /** Usable bytes: device memory minus what others hold. */
  get limit(): number {
    return this.config.totalMemory - this.config.outsideMemory;
  }

  newCapture(): number {
    return this.nextCapture++;
  }

  emit(
    action: number,
    addr: number,
    size: number,
    stream: number,
    capture: number,
    stack: Stack | null,
  ): void {
    this.emitted++;
    if (this.countOnly) return;
    const time = this.clock.now;
    this.queue.push({
      action,
      addr,
      size,
      stream,
      time,
      capture,
      stack,
      allocated: this.allocatedRequested,
      reserved: this.reserved,
    });
  }

  pool(index: number, small: boolean): Pool {
    return this.pools[index * 2 + (small ? 1 : 0)]!;
  }

  malloc(requested: number, stream: number, poolIndex: number, stack: Stack): Block {
    const capture = this.newCapture();
    this.processEvents(capture, stack);
    this.mallocs++;
    const size = roundSize(requested + (this.config.pad ?? 0));
    const pool = this.pool(poolIndex, isSmall(size));
    const block =
      this.takeFree(pool, stream, size) ??
      this.allocBlock(pool, stream, size, capture, stack) ??
      this.retryAfterFlush(pool, stream, size, capture, stack);
    if (block === null) throw new Error(`synthetic workload ran out of device memory (${requested} bytes)`);
    this.splitFor(block, size);
    block.state = ALLOCATED;
    block.requested = requested;
    block.capture = capture;
    block.stack = stack;
    this.allocatedRequested += requested;
    this.emit(ALLOC, block.addr, requested, stream, capture, stack);
    return block;
  }

  /**
   * The user frees a block. With `deferMallocs` > 0 the block was used on another stream
   * (record_stream): it stays active_pending_free until that many later mallocs have run.
   */
  free(block: Block, stack: Stack, deferMallocs = 0): void {
    if (block.state !== ALLOCATED) throw new Error('double free in synthetic workload');
    const capture = this.newCapture();
    const stream = block.segment.stream;
    this.allocatedRequested -= block.requested;
    this.emit(FREE_REQUESTED, block.addr, block.requested, stream, capture, stack);
    if (deferMallocs > 0) {
      block.state = PENDING;
      this.pending.push({ block, due: this.mallocs + deferMallocs });
    } else {
      this.freeBlock(block, capture, stack);
    }
  }

  /** torch.cuda.empty_cache(): wait for pending frees, return every wholly free segment. */
  emptyCache(stack: Stack): void {
    this.releaseCached(this.newCapture(), stack);
  }

  /**
   * A request `extra` bytes larger than what is left after the allocator's flush: traced as
   * `oom` with the rounded size and the free device memory, like a failed malloc.
   */
  failAllocation(extra: number, stream: number, stack: Stack): void {
    const capture = this.newCapture();
    this.processEvents(capture, stack);
    this.mallocs++;
    this.releaseCached(capture, stack);
    const deviceFree = this.limit - this.reserved;
    this.emit(
      OOM,
      deviceFree,
      roundSize(deviceFree + extra + (this.config.pad ?? 0)),
      stream,
      capture,
      stack,
    );
  }

  private processEvents(capture: number, stack: Stack): void {
    if (this.pending.length === 0) return;
    const still: PendingFree[] = [];
    for (const p of this.pending) {
      if (p.due <= this.mallocs) this.freeBlock(p.block, capture, stack);
      else still.push(p);
    }
    this.pending = still;
  }

  private takeFree(pool: Pool, stream: number, size: number): Block | null {
    const list = freeListOf(pool, stream);
    const block = list.bestFit(size);
    if (block !== null) list.remove(block);
    return block;
  }

  private allocBlock(pool: Pool, stream: number, size: number, capture: number, stack: Stack): Block | null {
    if (this.expandable !== null) return this.expandable.allocate(pool, stream, size, capture, stack);
    const segmentSize = allocationSize(size);
    if (this.reserved + segmentSize > this.limit) return null;
    const addr = this.va.alloc(segmentSize);
    if (addr === null) return null;
    const segment = new Segment(addr, segmentSize, stream, pool, false, capture, stack);
    this.segments.add(segment);
    this.reserved += segmentSize;
    this.emit(SEGMENT_ALLOC, addr, segmentSize, stream, capture, stack);
    return segment.head;
  }

  private retryAfterFlush(
    pool: Pool,
    stream: number,
    size: number,
    capture: number,
    stack: Stack,
  ): Block | null {
    this.releaseCached(capture, stack);
    return this.allocBlock(pool, stream, size, capture, stack);
  }

  /** The allocation takes the low addresses; the remainder goes back to the pool. */
  private splitFor(block: Block, size: number): void {
    const pool = block.segment.pool;
    if (!shouldSplit(block.size, size, pool.small, this.expandable !== null)) return;
    const rest = new Block(block.addr + size, block.size - size, block.segment);
    rest.prev = block;
    rest.next = block.next;
    if (block.next !== null) block.next.prev = rest;
    block.next = rest;
    block.size = size;
    freeListOf(pool, block.segment.stream).insert(rest);
  }

  private freeBlock(block: Block, capture: number, stack: Stack | null): void {
    const stream = block.segment.stream;
    this.emit(FREE_COMPLETED, block.addr, block.requested, stream, capture, stack);
    block.history = { addr: block.addr, requested: block.requested, stack: block.stack };
    block.state = FREE;
    block.stack = null;
    block.capture = 0;
    this.coalesce(block);
    freeListOf(block.segment.pool, stream).insert(block);
  }

  /**
   * Merges free neighbours into `block` (itself not in a free list): mapped with mapped, and, for
   * expandable segments, unmapped with unmapped.
   */
  coalesce(block: Block): void {
    const list = freeListOf(block.segment.pool, block.segment.stream);
    const prev = block.prev;
    if (prev !== null && prev.state === FREE && prev.mapped === block.mapped) {
      if (prev.mapped) list.remove(prev);
      block.addr = prev.addr;
      block.size += prev.size;
      block.prev = prev.prev;
      if (prev.prev !== null) prev.prev.next = block;
      else block.segment.head = block;
    }
    const next = block.next;
    if (next !== null && next.state === FREE && next.mapped === block.mapped) {
      if (next.mapped) list.remove(next);
      block.size += next.size;
      block.next = next.next;
      if (next.next !== null) next.next.prev = block;
    }
  }

  private releaseCached(capture: number, stack: Stack): void {
    // Blocks meant to stay pending until the dump (due = Infinity) are only made after the last flush.
    for (const p of this.pending) this.freeBlock(p.block, capture, stack);
    this.pending = [];
    // Private pools are in use by their graph, so only the default pools give memory back.
    for (const pool of this.pools) {
      if (pool.index !== 0) continue;
      for (const stream of [...pool.free.keys()].sort((a, b) => a - b)) {
        this.releasePoolStream(pool, stream, capture, stack);
      }
    }
  }

  private releasePoolStream(pool: Pool, stream: number, capture: number, stack: Stack): void {
    const list = freeListOf(pool, stream);
    for (const block of [...list.all()]) {
      if (block.segment.expandable) {
        this.expandable!.unmap(block, capture, stack);
      } else if (block.prev === null && block.next === null) {
        list.remove(block);
        this.segments.delete(block.segment);
        this.va.release(block.addr, block.size);
        this.reserved -= block.size;
        this.emit(SEGMENT_FREE, block.addr, block.size, stream, capture, stack);
      }
    }
  }
}
