import { AddrMap } from './addr-map.js';
import type { DeviceTrace } from './device-trace.js';
import { BlockState, type SegmentTables } from './segments.js';
import { NO_STACK } from './stack-table.js';
import { Action } from './trace-columns.js';

/**
 * Every allocation the file knows of on one device, as an interval of trace entries:
 * alloc → free_requested → free_completed, paired by address. Allocations made before the
 * recorded window (their alloc fell out of the ring buffer, or history started late) have
 * start = -1; allocations still alive at dump have end = trace length and link to their block.
 */
/** `freeRequested` of an allocation the user had freed before the recorded window began. */
export const FREED_BEFORE_WINDOW = -2;

export interface Allocations {
  count: number;
  start: Int32Array;
  freeRequested: Int32Array;
  end: Int32Array;
  addr: Float64Array;
  /** Requested bytes, as the trace records them. */
  size: Float64Array;
  stack: Int32Array;
  stream: Uint16Array;
  /** Dump-time block index, or -1 if freed inside the window. */
  block: Int32Array;
  /** Allocation id opened or closed by each trace entry (-1 for segment and other entries). */
  ofEntry: Int32Array;
  facts: AllocationFacts;
}

export interface AllocationFacts {
  /** Frees in the trace whose alloc is not in it (the ring buffer dropped it, or recording began later). */
  orphanFrees: number;
  orphanFreeBytes: number;
  /** Blocks alive at dump with no alloc in the trace. */
  blocksBeforeRecording: number;
  blocksBeforeRecordingBytes: number;
  /** Allocs in the trace still open at the end whose block is not in `segments` (inconsistent file). */
  unmatchedAllocs: number;
  /** An alloc at an address that was still allocated (its free was not recorded). */
  doubleAllocs: number;
}

/**
 * `streamCode`: the trace's id for a raw stream, for blocks only the dump shows (their segment's
 * stream). `allocs`: the trace's alloc entries (counted when not given).
 */
export function pairAllocations(
  trace: DeviceTrace,
  tables: SegmentTables,
  device: number,
  streamCode: (raw: number) => number,
  allocs = countAllocs(trace),
): Allocations {
  // Each alloc opens one allocation, and so does a free whose alloc is not in the trace: those
  // are few (the blocks alive when recording began), so room for them grows when needed rather
  // than doubling every column of a big trace up front.
  const table = new AllocationTable(allocs + tables.blocks.length + 1024);
  const facts = pair(trace, tables, device, streamCode, table);
  return table.result(trace, facts);
}

/**
 * pairAllocations' facts alone, by the same pairing with no table written: a summary needs the
 * facts, not the 40 bytes per allocation and 4 per entry of the table.
 */
export function allocationFacts(trace: DeviceTrace, tables: SegmentTables, device: number): AllocationFacts {
  return pair(trace, tables, device, () => 0, undefined);
}

/** One pass over the trace, with the one Pairing class whether or not a table is written. */
function pair(
  trace: DeviceTrace,
  tables: SegmentTables,
  device: number,
  streamCode: (raw: number) => number,
  table: AllocationTable | undefined,
): AllocationFacts {
  const p = new Pairing(trace, table);
  const { action } = trace;
  const n = trace.length;
  for (let i = 0; i < n; i++) {
    const a = action[i]!;
    if (a === Action.alloc) p.onAlloc(i);
    else if (a === Action.free_requested) p.onFree(i);
    else if (a === Action.free_completed) p.onFreeCompleted(i, false);
    else if (a === Action.free) p.onFreeCompleted(i, true);
  }
  p.linkBlocks(tables, device, n, streamCode);
  return p.facts;
}

function countAllocs(trace: DeviceTrace): number {
  let allocs = 0;
  const { action } = trace;
  for (let i = 0; i < trace.length; i++) if (action[i] === Action.alloc) allocs++;
  return allocs;
}

/**
 * The rules of pairing: which entry opens or closes which allocation, and what the file lacks.
 * Ids count the allocations found; with a table, each is written to it.
 */
class Pairing {
  readonly facts: AllocationFacts = {
    orphanFrees: 0,
    orphanFreeBytes: 0,
    blocksBeforeRecording: 0,
    blocksBeforeRecordingBytes: 0,
    unmatchedAllocs: 0,
    doubleAllocs: 0,
  };
  private readonly open = new AddrMap();
  private count = 0;
  private readonly addr: Float64Array;
  private readonly size: Float64Array;
  private readonly stack: Int32Array;
  private readonly stream: Uint16Array;

  constructor(
    trace: DeviceTrace,
    private readonly table: AllocationTable | undefined,
  ) {
    this.addr = trace.addr;
    this.size = trace.size;
    this.stack = trace.stack;
    this.stream = trace.stream;
  }

  onAlloc(i: number): void {
    const addr = this.addr[i]!;
    const id = this.add(i, addr, this.size[i]!, this.stack[i]!, this.stream[i]!);
    const prev = this.open.put(addr, id);
    if (prev !== undefined) {
      this.facts.doubleAllocs++;
      this.table?.setEnd(prev, i);
    }
  }

  /** free_requested (the block stays open until its free_completed). */
  onFree(i: number): void {
    const addr = this.addr[i]!;
    let id = this.open.get(addr);
    if (id === undefined) {
      id = this.orphan(i);
      this.open.set(addr, id);
    }
    this.table?.setFreeRequested(id, i);
  }

  /** free_completed, or (`folded`) `free`: a free requested and completed in the same entry. */
  onFreeCompleted(i: number, folded: boolean): void {
    let id = this.open.take(this.addr[i]!);
    if (id === undefined) {
      id = this.orphan(i);
      // Completed with no free_requested seen: the user freed it before the window began.
      if (!folded) this.table?.setFreeRequested(id, FREED_BEFORE_WINDOW);
    }
    if (folded) this.table?.setFreeRequested(id, i);
    this.table?.setEnd(id, i);
  }

  /** An allocation known only by its free: its alloc is not in the trace. */
  private orphan(i: number): number {
    this.facts.orphanFrees++;
    this.facts.orphanFreeBytes += this.size[i]!;
    return this.add(-1, this.addr[i]!, this.size[i]!, NO_STACK, this.stream[i]!);
  }

  private add(start: number, addr: number, size: number, stack: number, stream: number): number {
    const id = this.count++;
    this.table?.add(id, start, addr, size, stack, stream);
    return id;
  }

  /** Blocks alive at dump close what is still open; the others were allocated before recording. */
  linkBlocks(tables: SegmentTables, device: number, n: number, streamCode: (raw: number) => number): void {
    const { blocks } = tables;
    const { open, table } = this;
    for (const seg of tables.segments) {
      if (seg.device !== device) continue;
      for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
        const state = blocks.state[k];
        if (state !== BlockState.allocated && state !== BlockState.pendingFree) continue;
        let id = open.take(blocks.address[k]!);
        if (id === undefined) {
          this.facts.blocksBeforeRecording++;
          this.facts.blocksBeforeRecordingBytes += blocks.requestedSize[k]!;
          const stream = streamCode(seg.stream);
          id = this.add(-1, blocks.address[k]!, blocks.requestedSize[k]!, blocks.stack[k]!, stream);
          // Pending at dump with no free_requested in the window: the user freed it before.
          if (state === BlockState.pendingFree) table?.setFreeRequested(id, FREED_BEFORE_WINDOW);
        }
        table?.setBlock(id, k);
        table?.setEnd(id, n);
      }
    }
    this.facts.unmatchedAllocs = open.size;
    open.forEachValue((id) => table?.setEnd(id, n));
  }
}

/**
 * The allocation table's columns, grown as pairing finds allocations. Pairing writes only what
 * the first questions read (intervals, sizes, stacks); the rest is completed on first read
 * (PairedAllocations): a column written for every allocation costs its memory's first touch,
 * and on a 7.5M-entry trace those were most of the table's cost.
 */
class AllocationTable {
  count = 0;
  start: Int32Array;
  freeRequested: Int32Array;
  end: Int32Array;
  /** Written here only for allocations whose alloc is not in the trace; the others are their alloc's. */
  addr: Float64Array;
  size: Float64Array;
  stack: Int32Array;
  stream: Uint16Array;
  /** (allocation, dump-time block) pairs. */
  readonly links: number[] = [];
  /** (entry, allocation) of free requests whose allocation a later request took over. */
  readonly replacedFrees: number[] = [];

  constructor(capacity: number) {
    this.start = new Int32Array(capacity);
    this.freeRequested = new Int32Array(capacity);
    this.end = new Int32Array(capacity);
    this.addr = new Float64Array(capacity);
    this.size = new Float64Array(capacity);
    this.stack = new Int32Array(capacity);
    this.stream = new Uint16Array(capacity);
  }

  /** Allocation `id`, the next one (ids come in order). */
  add(id: number, start: number, addr: number, size: number, stack: number, stream: number): void {
    if (id === this.start.length) this.grow();
    this.count = id + 1;
    this.start[id] = start;
    this.freeRequested[id] = -1;
    this.end[id] = -1;
    this.size[id] = size;
    this.stack[id] = stack;
    if (start < 0) {
      this.addr[id] = addr;
      this.stream[id] = stream;
    }
  }

  setFreeRequested(id: number, entry: number): void {
    const before = this.freeRequested[id]!;
    if (before >= 0) this.replacedFrees.push(before, id);
    this.freeRequested[id] = entry;
  }

  setEnd(id: number, entry: number): void {
    this.end[id] = entry;
  }

  setBlock(id: number, block: number): void {
    this.links.push(id, block);
  }

  private grow(): void {
    const n = this.start.length * 2;
    this.start = grown(this.start, new Int32Array(n));
    this.freeRequested = grown(this.freeRequested, new Int32Array(n));
    this.end = grown(this.end, new Int32Array(n));
    this.addr = grown(this.addr, new Float64Array(n));
    this.size = grown(this.size, new Float64Array(n));
    this.stack = grown(this.stack, new Int32Array(n));
    this.stream = grown(this.stream, new Uint16Array(n));
  }

  result(trace: DeviceTrace, facts: AllocationFacts): Allocations {
    return new PairedAllocations(this, trace, facts);
  }
}

/** An Allocations whose addresses, streams, blocks and entry ids are completed on first read. */
class PairedAllocations implements Allocations {
  readonly count: number;
  readonly start: Int32Array;
  readonly freeRequested: Int32Array;
  readonly end: Int32Array;
  readonly size: Float64Array;
  readonly stack: Int32Array;
  /** Held in one object, so a view made with withSizes completes them for both. */
  private readonly later: {
    addr?: Float64Array;
    stream?: Uint16Array;
    block?: Int32Array;
    ofEntry?: Int32Array;
  } = {};

  constructor(
    private readonly table: AllocationTable,
    private readonly trace: DeviceTrace,
    readonly facts: AllocationFacts,
  ) {
    const c = table.count;
    this.count = c;
    this.start = table.start.subarray(0, c);
    this.freeRequested = table.freeRequested.subarray(0, c);
    this.end = table.end.subarray(0, c);
    this.size = table.size.subarray(0, c);
    this.stack = table.stack.subarray(0, c);
  }

  get addr(): Float64Array {
    this.later.addr ??= byAlloc(this.table.addr.subarray(0, this.count), this.start, this.trace.addr);
    return this.later.addr;
  }

  get stream(): Uint16Array {
    this.later.stream ??= byAlloc(this.table.stream.subarray(0, this.count), this.start, this.trace.stream);
    return this.later.stream;
  }

  get block(): Int32Array {
    if (this.later.block === undefined) {
      const block = new Int32Array(this.count).fill(-1);
      const { links } = this.table;
      for (let j = 0; j < links.length; j += 2) block[links[j]!] = links[j + 1]!;
      this.later.block = block;
    }
    return this.later.block;
  }

  get ofEntry(): Int32Array {
    this.later.ofEntry ??= entryIds(this, this.table.replacedFrees, this.trace.length);
    return this.later.ofEntry;
  }
}

/** `column` completed with each traced allocation's value: its alloc entry's in `traced`. */
function byAlloc<T extends Float64Array | Uint16Array>(column: T, start: Int32Array, traced: T): T {
  for (let id = 0; id < column.length; id++) {
    const s = start[id]!;
    if (s >= 0) column[id] = traced[s]!;
  }
  return column;
}

/**
 * The allocation each entry opens or closes, as pairing met them. Entries are each one event, so
 * only two allocations name one entry: one closed by an alloc at its address (its free was not
 * recorded) and the one that alloc opens; the later id, the opened one, is written last and kept.
 */
function entryIds(
  a: Pick<Allocations, 'count' | 'start' | 'freeRequested' | 'end'>,
  replacedFrees: number[],
  entries: number,
): Int32Array {
  const ofEntry = new Int32Array(entries).fill(-1);
  const { start, freeRequested, end } = a;
  for (let id = 0; id < a.count; id++) {
    const e = end[id]!;
    if (e >= 0 && e < entries) ofEntry[e] = id;
    const f = freeRequested[id]!;
    if (f >= 0) ofEntry[f] = id;
    const s = start[id]!;
    if (s >= 0) ofEntry[s] = id;
  }
  for (let j = 0; j < replacedFrees.length; j += 2) ofEntry[replacedFrees[j]!] = replacedFrees[j + 1]!;
  return ofEntry;
}

/** `a` with other sizes (a stream's view): the rest, completed later or not, is a's. */
export function withSizes(a: Allocations, size: Float64Array): Allocations {
  return Object.create(a, { size: { value: size, enumerable: true } }) as Allocations;
}

function grown<T extends Int32Array | Float64Array | Uint16Array>(old: T, bigger: T): T {
  bigger.set(old);
  return bigger;
}
