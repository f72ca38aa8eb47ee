/**
 * Expandable segments (allocator-spec §5): one reserved address range per pool and stream,
 * mapped page by page (2 MiB small pool, 20 MiB or `large_segment_size` large pool) at the lowest
 * unmapped address that leaves room, and unmapped only by a flush (empty_cache, OOM retry).
 */
import { Action } from '../model/trace-columns.js';
import type { SimAllocator } from './allocator.js';
import { FREE, NONE, UNMAPPED } from './block-store.js';
import { SMALL_BUFFER } from './rounding.js';

/** VA reserved per expandable segment when the device's memory is not known. */
const UNKNOWN_DEVICE_MEMORY = 2 ** 40;

export function pageSize(a: SimAllocator, pool: number): number {
  return (pool & 1) === 1 ? SMALL_BUFFER : a.settings.largeSegmentSize;
}

/** `try_allocate_expandable_block`: a free mapped block of at least `size` bytes, or NONE. */
export function allocateExpandable(a: SimAllocator, pool: number, stream: number, size: number): number {
  const bl = a.blocks;
  let c = findRoom(a, pool, stream, size);
  if (bl.state[c] === UNMAPPED) c = mapBlock(a, c, Math.min(bl.size[c]!, size));
  while (c !== NONE && bl.size[c]! < size) {
    const next = bl.next[c]!;
    // Pages mapped so far stay mapped when a later page fails, as in PyTorch.
    c = mapBlock(a, next, Math.min(size - bl.size[c]!, bl.size[next]!));
  }
  if (c === NONE) return NONE;
  a.removeFree(c);
  return c;
}

/** `find_expandable_block`: lowest unmapped hole (with the free block before it) that has room. */
function findRoom(a: SimAllocator, pool: number, stream: number, size: number): number {
  const bl = a.blocks;
  const key = pool * 65536 + stream;
  let list = a.expandableOf.get(key);
  for (const seg of list ?? []) {
    for (let u = a.segments.head[seg]!; u !== NONE; u = bl.next[u]!) {
      if (bl.state[u] !== UNMAPPED) continue;
      const p = bl.prev[u]!;
      const c = p !== NONE && bl.state[p] === FREE ? p : u;
      if (hasRoom(a, c, size)) return c;
    }
  }
  const page = pageSize(a, pool);
  const memory = Number.isFinite(a.capacity) ? a.capacity : UNKNOWN_DEVICE_MEMORY;
  const vaSize = Math.ceil((memory * 1.125) / page) * page;
  const base = a.addresses.expandableRange(vaSize);
  const seg = a.segments.add(base, vaSize, pool, stream, true, a.entry);
  const b = bl.newBlock(base, vaSize, seg, pool, stream, UNMAPPED);
  a.segments.head[seg] = b;
  if (list === undefined) {
    list = [];
    a.expandableOf.set(key, list);
  }
  list.push(seg);
  return b;
}

function hasRoom(a: SimAllocator, c: number, size: number): boolean {
  const bl = a.blocks;
  let room = 0;
  for (let b = c; b !== NONE && room < size; b = bl.next[b]!) {
    const st = bl.state[b];
    if (st !== FREE && st !== UNMAPPED) break;
    room += bl.size[b]!;
  }
  return room >= size;
}

/** `map_block`: maps the pages covering the first `want` bytes of an unmapped block. */
function mapBlock(a: SimAllocator, b: number, want: number): number {
  const bl = a.blocks;
  const page = pageSize(a, bl.pool[b]!);
  const size = Math.min(Math.ceil(want / page) * page, bl.size[b]!);
  if (a.stats.reserved + size > a.capacity) return NONE;
  if (size < bl.size[b]!) bl.splitOff(b, size);
  const addr = bl.addr[b]!;
  bl.state[b] = FREE;
  bl.requested[b] = 0;
  a.mergeNeighbours(b, FREE);
  a.insertFree(b);
  a.stats.onMap(size);
  a.emit(Action.segment_map, addr, size, bl.stream[b]!);
  return b;
}

/** `unmap_block`: gives back the whole pages inside a free block. */
export function unmapBlock(a: SimAllocator, b: number): void {
  const bl = a.blocks;
  const seg = bl.segment[b]!;
  const base = a.segments.addr[seg]!;
  const page = pageSize(a, bl.pool[b]!);
  const addr = bl.addr[b]!;
  const end = addr + bl.size[b]!;
  const first = base + Math.ceil((addr - base) / page) * page;
  const last = base + Math.floor((end - base) / page) * page;
  if (last <= first) return;
  a.removeFree(b);
  if (end > last) a.insertFree(bl.splitOff(b, last - addr));
  let hole = b;
  if (first > addr) {
    hole = bl.splitOff(b, first - addr);
    a.insertFree(b);
  }
  bl.state[hole] = UNMAPPED;
  a.mergeNeighbours(hole, UNMAPPED);
  a.stats.onUnmap(last - first);
  a.emit(Action.segment_unmap, first, last - first, bl.stream[hole]!);
  if (!bl.isSplit(hole)) dropSegment(a, seg, hole);
}

/** The whole range is unmapped: its address reservation goes (not traced). */
function dropSegment(a: SimAllocator, seg: number, block: number): void {
  a.segments.drop(seg);
  a.blocks.release(block);
  const key = a.segments.pool[seg]! * 65536 + a.segments.stream[seg]!;
  const list = a.expandableOf.get(key);
  if (list !== undefined) list.splice(list.indexOf(seg), 1);
}
