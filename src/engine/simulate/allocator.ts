/**
 * One device's native caching allocator (allocator-spec §3-§5): malloc's chain of best fit,
 * GC, cudaMalloc, oversize release, full flush and OOM; free with pending completion and
 * coalescing. Expandable segments, GC and the release paths live in their own modules.
 */
import { Action } from '../model/trace-columns.js';
import { ALLOCATED, BlockStore, FREE, NONE, PENDING, SegmentStore, UNMAPPED } from './block-store.js';
import type { EventLog } from './event-log.js';
import { allocateExpandable } from './expandable.js';
import { FreeIndex } from './free-index.js';
import { collectGarbage, releaseAvailable, releaseCached } from './release.js';
import { allocationSize, isSmallSize, MIN_BLOCK, roundSize, SMALL_SIZE } from './rounding.js';
import { fractionActive, type SimSettings } from './settings.js';
import { SimStats } from './stats.js';

/** Where new device memory lands: the simulator cannot know cudaMalloc's addresses. */
export interface AddressSource {
  segment(size: number): number;
  expandableRange(size: number): number;
}

export interface AllocatorOptions {
  settings: SimSettings;
  /** Bytes the allocator may obtain from CUDA (reserved + device free); Infinity: unlimited. */
  capacity: number;
  addresses: AddressSource;
  log: EventLog;
  /** Number of private pools besides the default one. */
  privatePools: number;
  /** Streams ordered as their raw cudaStream_t values (the free sets' first sort key). */
  streamOrder: readonly number[];
}

export class SimAllocator {
  readonly blocks = new BlockStore();
  readonly segments = new SegmentStore();
  readonly stats = new SimStats();
  readonly settings: SimSettings;
  readonly capacity: number;
  readonly log: EventLog;
  readonly addresses: AddressSource;
  readonly streamOrder: readonly number[];
  /** Free mapped blocks per pool and stream: free[pool][stream]. */
  readonly free: FreeIndex[][];
  /** get_free_block calls per pool while GC is enabled (the GC's clock). */
  readonly freeCalls: number[];
  /** Expandable segments per pool and stream, oldest first. */
  readonly expandableOf = new Map<number, number[]>();
  readonly pending = new Set<number>();
  readonly gcEnabled: boolean;
  /** No power-of-two divisions configured: round_size is plain 512-byte rounding. */
  private readonly plainRounding: boolean;
  /** Where takeFreeBlock found its block, so the split remainder can take its place in one shift. */
  private takenFrom: FreeIndex | null = null;
  private takenAt = -1;
  /** Trace entry being replayed (stamped on every event). */
  entry = -1;
  /** Allocation id (model/allocations.ts) the next malloc serves. */
  owner = -1;

  constructor(o: AllocatorOptions) {
    this.settings = o.settings;
    this.capacity = o.capacity;
    this.log = o.log;
    this.addresses = o.addresses;
    this.streamOrder = o.streamOrder;
    const pools = 2 * (1 + o.privatePools);
    this.free = Array.from({ length: pools }, () => []);
    this.freeCalls = new Array<number>(pools).fill(0);
    this.gcEnabled = fractionActive(o.settings) && o.settings.gcThreshold > 0;
    this.plainRounding = o.settings.divisions.every((v) => v === 0);
  }

  /** Bytes the allocator may hold: the device capacity, or the memory fraction of it. */
  get limit(): number {
    const f = this.settings.memoryFraction;
    return fractionActive(this.settings) && f !== undefined ? f * this.capacity : this.capacity;
  }

  freeIndex(pool: number, stream: number): FreeIndex {
    const byStream = this.free[pool]!;
    let index = byStream[stream];
    if (index === undefined) {
      index = new FreeIndex(this.blocks);
      byStream[stream] = index;
    }
    return index;
  }

  /** Whether alloc/free events are logged (a sweep needs only segment events and ooms). */
  get logsRequests(): boolean {
    return !this.log.segmentsOnly;
  }

  emit(action: Action, addr: number, size: number, stream: number): void {
    this.log.push(action, addr, size, stream, this.entry, this.stats.reserved);
  }

  /** `malloc`: a block for `requested` bytes, or NONE after an `oom`. */
  malloc(requested: number, stream: number, privatePool: number): number {
    const s = this.settings;
    const padded = requested + s.pad;
    const size =
      this.plainRounding && padded >= MIN_BLOCK
        ? MIN_BLOCK * Math.ceil(padded / MIN_BLOCK)
        : roundSize(requested, s);
    const pool = privatePool * 2 + (isSmallSize(size) ? 1 : 0);
    const expandable = s.expandable && (privatePool === 0 || s.version.expandablePrivatePools);
    let b = this.takeFreeBlock(pool, stream, size, expandable);
    if (b === NONE) {
      this.takenFrom = null;
      if (this.gcEnabled) collectGarbage(this);
      const segmentSize = allocationSize(size, s);
      b = this.allocBlock(pool, stream, size, segmentSize, expandable, false);
      if (b === NONE && releaseAvailable(this, pool, stream, size)) {
        b = this.allocBlock(pool, stream, size, segmentSize, expandable, false);
      }
      if (b === NONE) {
        releaseCached(this);
        b = this.allocBlock(pool, stream, size, segmentSize, expandable, true);
      }
      if (b === NONE) {
        this.stats.oom(this.entry);
        this.emit(Action.oom, Math.max(0, this.limit - this.stats.reserved), size, stream);
        return NONE;
      }
    }
    this.allocFound(b, size, requested);
    return b;
  }

  /**
   * The user frees a block (`free_requested`); it becomes reusable at `completeFree`. `pending`:
   * the completion comes later (record_stream), so a flush must complete it.
   */
  requestFree(b: number, pending: boolean): void {
    const bl = this.blocks;
    bl.state[b] = PENDING;
    this.stats.onFreeRequested(bl.size[b]!, bl.requested[b]!);
    if (pending) this.pending.add(b);
    // Passing doubles to a call that is not inlined boxes them: skip the call when unlogged.
    if (this.logsRequests) this.emit(Action.free_requested, bl.addr[b]!, bl.requested[b]!, bl.stream[b]!);
  }

  /** `free_block`: the block is reusable; merge with free neighbours of the same segment. */
  completeFree(b: number): void {
    const bl = this.blocks;
    if (this.pending.size > 0) this.pending.delete(b);
    if (this.logsRequests) this.emit(Action.free_completed, bl.addr[b]!, bl.requested[b]!, bl.stream[b]!);
    this.stats.onFreeCompleted(bl.size[b]!);
    bl.state[b] = FREE;
    bl.owner[b] = -1;
    const prev = bl.prev[b]!;
    const next = bl.next[b]!;
    const freePrev = prev !== NONE && bl.state[prev] === FREE;
    const freeNext = next !== NONE && bl.state[next] === FREE;
    if (!freePrev && !freeNext) {
      this.insertFree(b);
      return;
    }
    // The merged block takes the free set slot of one neighbour: one shift instead of two or three.
    if (freePrev && freeNext) this.mergeWith(b, next, FREE);
    const n = freePrev ? prev : next;
    const index = this.freeIndex(bl.pool[b]!, bl.stream[b]!);
    const at = index.find(n);
    const seg = bl.segment[n]!;
    if (this.segments.head[seg] === n) this.segments.head[seg] = b;
    bl.absorb(b, n);
    bl.gcBase[b] = this.freeCalls[bl.pool[b]!]!;
    index.replaceAt(at, b);
  }

  /** torch.cuda.empty_cache(). */
  emptyCache(): void {
    releaseCached(this);
  }

  insertFree(b: number): void {
    const bl = this.blocks;
    const pool = bl.pool[b]!;
    bl.gcBase[b] = this.freeCalls[pool]!;
    this.freeIndex(pool, bl.stream[b]!).insert(b);
  }

  removeFree(b: number): void {
    const bl = this.blocks;
    this.freeIndex(bl.pool[b]!, bl.stream[b]!).remove(b);
  }

  /** Merges `b` with neighbours in `state` (FREE ones leave the free set, UNMAPPED ones do not sit in it). */
  mergeNeighbours(b: number, state: number): void {
    this.mergeWith(b, this.blocks.prev[b]!, state);
    this.mergeWith(b, this.blocks.next[b]!, state);
  }

  private mergeWith(b: number, n: number, state: number): void {
    const bl = this.blocks;
    if (n === NONE || bl.state[n] !== state) return;
    if (state === FREE) this.removeFree(n);
    const seg = bl.segment[n]!;
    if (this.segments.head[seg] === n) this.segments.head[seg] = b;
    bl.absorb(b, n);
  }

  /** `get_free_block` (allocator-spec §3.1): best fit in the stream's free set, oversize rules. */
  private takeFreeBlock(pool: number, stream: number, size: number, expandable: boolean): number {
    if (this.gcEnabled) this.freeCalls[pool]!++;
    const index = this.free[pool]![stream];
    if (index === undefined) return NONE;
    let i = index.lowerBound(size, 0);
    if (i >= index.count) return NONE;
    const bl = this.blocks;
    if (this.segments.anyExpandable && this.segments.expandable[bl.segment[index.id(i)]!]) {
      i = expandable ? this.preferNonTail(index, i) : this.skipExpandable(index, i);
      if (i >= index.count) return NONE;
    }
    const found = index.size(i);
    const s = this.settings;
    if (size < s.maxSplitSize && found >= s.maxSplitSize) return NONE;
    if (size >= s.maxSplitSize && found >= size + s.nonSplitTolerance) return NONE;
    this.takenFrom = index;
    this.takenAt = i;
    return index.id(i);
  }

  /** Passes over free blocks that sit before an unmapped tail while a later one is smaller with it. */
  private preferNonTail(index: FreeIndex, i: number): number {
    const bl = this.blocks;
    while (
      i + 1 < index.count &&
      this.segments.expandable[bl.segment[index.id(i)]!] &&
      withUnmappedTail(bl, index.id(i + 1)) < withUnmappedTail(bl, index.id(i))
    )
      i++;
    return i;
  }

  /** Expandable segments turned off: their free blocks are not reused. */
  private skipExpandable(index: FreeIndex, i: number): number {
    const bl = this.blocks;
    let j = i + 1;
    while (j < index.count && this.segments.expandable[bl.segment[index.id(j)]!]) j++;
    return j;
  }

  /** `alloc_block` (allocator-spec §3.3): new device memory for the request. */
  private allocBlock(
    pool: number,
    stream: number,
    size: number,
    segmentSize: number,
    expandable: boolean,
    isRetry: boolean,
  ): number {
    if (isRetry) this.stats.retries++;
    if (fractionActive(this.settings) && this.stats.reserved + segmentSize > this.limit) return NONE;
    if (expandable) return allocateExpandable(this, pool, stream, size);
    if (this.stats.reserved + segmentSize > this.capacity) return NONE;
    const addr = this.addresses.segment(segmentSize);
    const seg = this.segments.add(addr, segmentSize, pool, stream, false, this.entry);
    const b = this.blocks.newBlock(addr, segmentSize, seg, pool, stream, FREE);
    this.segments.head[seg] = b;
    this.stats.onSegmentAlloc(segmentSize);
    this.emit(Action.segment_alloc, addr, segmentSize, stream);
    return b;
  }

  /** `alloc_found_block`: split per `should_split`, the allocation takes the low part. */
  private allocFound(b: number, size: number, requested: number): void {
    const bl = this.blocks;
    const remaining = bl.size[b]! - size;
    const small = (bl.pool[b]! & 1) === 1;
    const split =
      small || this.settings.expandable
        ? remaining >= MIN_BLOCK
        : size < this.settings.maxSplitSize && remaining > SMALL_SIZE;
    const from = this.takenFrom;
    this.takenFrom = null;
    if (split) {
      const rest = bl.splitOff(b, size);
      if (from === null) this.insertFree(rest);
      else {
        bl.gcBase[rest] = this.freeCalls[bl.pool[rest]!]!;
        from.replaceAt(this.takenAt, rest);
      }
    } else if (from !== null) {
      from.removeAt(this.takenAt);
    }
    bl.state[b] = ALLOCATED;
    bl.requested[b] = requested;
    bl.owner[b] = this.owner;
    this.stats.onAlloc(bl.size[b]!, requested);
    if (this.logsRequests) this.emit(Action.alloc, bl.addr[b]!, requested, bl.stream[b]!);
  }
}

/** A free block's size with the unmapped range after it (a module function: a closure per malloc costs an allocation). */
function withUnmappedTail(bl: BlockStore, b: number): number {
  const n = bl.next[b]!;
  return bl.size[b]! + (n !== NONE && bl.state[n] === UNMAPPED ? bl.size[n]! : 0);
}
