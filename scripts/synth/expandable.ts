/**
 * Expandable segments (allocator-spec §5): one reserved VA range per (pool, stream), mapped in
 * pages (2 MiB small, 20 MiB large) at the lowest unmapped address that leaves room, unmapped
 * again only by empty_cache. The snapshot shows one segment per contiguous mapped range.
 */
import type { Allocator } from './allocator.js';
import { Block, freeListOf, type Pool, Segment } from './blocks.js';
import { SEGMENT_MAP, SEGMENT_UNMAP } from './events.js';
import type { Stack } from './frames.js';
import { LARGE_BUFFER, SMALL_BUFFER } from './sizes.js';

export class ExpandableSegments {
  private readonly byKey = new Map<string, Segment>();
  private nextVa: number;

  constructor(
    private readonly allocator: Allocator,
    vaBase: number,
  ) {
    this.nextVa = vaBase;
  }

  /** A free mapped block of at least `size` bytes (taken out of the free list), or null. */
  allocate(pool: Pool, stream: number, size: number, capture: number, stack: Stack): Block | null {
    const segment = this.segmentFor(pool, stream);
    const start = findRoom(segment, size);
    if (start === null) return null;
    let c: Block | null = start;
    if (!c.mapped) c = this.mapBlock(c, Math.min(c.size, size), capture, stack);
    while (c !== null && c.size < size) {
      const next: Block = c.next!;
      c = this.mapBlock(next, Math.min(size - c.size, next.size), capture, stack);
    }
    if (c === null) return null;
    freeListOf(pool, stream).remove(c);
    return c;
  }

  /** empty_cache: give back the whole pages inside a free block. */
  unmap(block: Block, capture: number, stack: Stack): void {
    const segment = block.segment;
    const page = pageSize(segment.pool);
    const end = block.addr + block.size;
    const first = segment.addr + Math.ceil((block.addr - segment.addr) / page) * page;
    const last = segment.addr + Math.floor((end - segment.addr) / page) * page;
    if (last <= first) return;
    const list = freeListOf(segment.pool, segment.stream);
    list.remove(block);
    if (end > last) list.insert(splitOff(block, last - block.addr));
    const hole = first > block.addr ? splitOff(block, first - block.addr) : block;
    if (hole !== block) list.insert(block);
    hole.mapped = false;
    hole.requested = 0;
    hole.history = null;
    this.allocator.coalesce(hole);
    this.allocator.reserved -= last - first;
    this.allocator.emit(SEGMENT_UNMAP, first, last - first, segment.stream, capture, stack);
  }

  // PyTorch frees a range once it is wholly unmapped and reserves a new one on the next growth;
  // neither is traced, and keeping the range instead only keeps later addresses the same.
  private segmentFor(pool: Pool, stream: number): Segment {
    const key = `${pool.index}:${pool.small}:${stream}`;
    let segment = this.byKey.get(key);
    if (segment === undefined) {
      const page = pageSize(pool);
      const config = this.allocator.config;
      const size = Math.ceil((config.totalMemory * 1.125) / page) * page;
      segment = new Segment(this.nextVa, size, stream, pool, true, 0, null);
      segment.head.mapped = false;
      this.nextVa += Math.ceil(size / 2 ** 30) * 2 ** 30;
      this.byKey.set(key, segment);
      this.allocator.segments.add(segment);
    }
    return segment;
  }

  /** Maps the pages covering the first `want` bytes of an unmapped block; merges free neighbours. */
  private mapBlock(b: Block, want: number, capture: number, stack: Stack): Block | null {
    const segment = b.segment;
    const page = pageSize(segment.pool);
    const size = Math.min(Math.ceil(want / page) * page, b.size);
    if (this.allocator.reserved + size > this.allocator.limit) return null;
    if (size < b.size) {
      const rest = splitOff(b, size);
      rest.mapped = false;
    }
    b.mapped = true;
    b.requested = 0;
    this.allocator.reserved += size;
    this.allocator.emit(SEGMENT_MAP, b.addr, size, segment.stream, capture, stack);
    this.allocator.coalesce(b);
    freeListOf(segment.pool, segment.stream).insert(b);
    return b;
  }
}

function pageSize(pool: Pool): number {
  return pool.small ? SMALL_BUFFER : LARGE_BUFFER;
}

/** Lowest unmapped block (or the free block just before it) from which `size` bytes can be had. */
function findRoom(segment: Segment, size: number): Block | null {
  for (let b: Block | null = segment.head; b !== null; b = b.next) {
    if (b.mapped) continue;
    const start = b.prev?.isFree ? b.prev : b;
    let room = 0;
    for (let c: Block | null = start; c !== null && room < size && (c.isFree || !c.mapped); c = c.next) {
      room += c.size;
    }
    if (room >= size) return start;
  }
  return null;
}

/** Cuts `b` at `offset`; `b` keeps the low part, the new block (same state) the high part. */
function splitOff(b: Block, offset: number): Block {
  const rest = new Block(b.addr + offset, b.size - offset, b.segment);
  rest.mapped = b.mapped;
  rest.prev = b;
  rest.next = b.next;
  if (b.next !== null) b.next.prev = rest;
  b.next = rest;
  b.size = offset;
  return rest;
}
