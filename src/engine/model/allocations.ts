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
  const ofEntry = new Int32Array(trace.length).fill(-1);
  const facts = pair(trace, tables, device, streamCode, table, ofEntry);
  return table.result(ofEntry, facts);
}

/**
 * pairAllocations' facts alone, by the same pairing with no table written: a summary needs the
 * facts, not the 40 bytes per allocation and 4 per entry of the table.
 */
export function allocationFacts(trace: DeviceTrace, tables: SegmentTables, device: number): AllocationFacts {
  return pair(trace, tables, device, () => 0, new NoTable(), undefined);
}

function pair(
  trace: DeviceTrace,
  tables: SegmentTables,
  device: number,
  streamCode: (raw: number) => number,
  sink: PairingSink,
  ofEntry: Int32Array | undefined,
): AllocationFacts {
  const p = new Pairing(sink);
  const n = trace.length;
  for (let i = 0; i < n; i++) {
    const action = trace.action[i]!;
    let id: number;
    if (action === Action.alloc) id = p.onAlloc(trace, i);
    else if (action === Action.free_requested) id = p.onFree(trace, i);
    else if (action === Action.free_completed) id = p.onFreeCompleted(trace, i, false);
    else if (action === Action.free) id = p.onFreeCompleted(trace, i, true);
    else continue;
    if (ofEntry !== undefined) ofEntry[i] = id;
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

/** Where pairing writes the allocations it finds. */
interface PairingSink {
  add(start: number, addr: number, size: number, stack: number, stream: number): number;
  setFreeRequested(id: number, entry: number): void;
  setEnd(id: number, entry: number): void;
  setBlock(id: number, block: number): void;
}

/** The rules of pairing: which entry opens or closes which allocation, and what the file lacks. */
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

  constructor(private readonly sink: PairingSink) {}

  onAlloc(t: DeviceTrace, i: number): number {
    const addr = t.addr[i]!;
    const id = this.sink.add(i, addr, t.size[i]!, t.stack[i]!, t.stream[i]!);
    const prev = this.open.put(addr, id);
    if (prev !== undefined) {
      this.facts.doubleAllocs++;
      this.sink.setEnd(prev, i);
    }
    return id;
  }

  /** free_requested (the block stays open until its free_completed). */
  onFree(t: DeviceTrace, i: number): number {
    const addr = t.addr[i]!;
    let id = this.open.get(addr);
    if (id === undefined) {
      id = this.orphan(t, i);
      this.open.set(addr, id);
    }
    this.sink.setFreeRequested(id, i);
    return id;
  }

  /** free_completed, or (`folded`) `free`: a free requested and completed in the same entry. */
  onFreeCompleted(t: DeviceTrace, i: number, folded: boolean): number {
    let id = this.open.take(t.addr[i]!);
    if (id === undefined) {
      id = this.orphan(t, i);
      // Completed with no free_requested seen: the user freed it before the window began.
      if (!folded) this.sink.setFreeRequested(id, FREED_BEFORE_WINDOW);
    }
    if (folded) this.sink.setFreeRequested(id, i);
    this.sink.setEnd(id, i);
    return id;
  }

  /** An allocation known only by its free: its alloc is not in the trace. */
  private orphan(t: DeviceTrace, i: number): number {
    this.facts.orphanFrees++;
    this.facts.orphanFreeBytes += t.size[i]!;
    return this.sink.add(-1, t.addr[i]!, t.size[i]!, NO_STACK, t.stream[i]!);
  }

  /** Blocks alive at dump close what is still open; the others were allocated before recording. */
  linkBlocks(tables: SegmentTables, device: number, n: number, streamCode: (raw: number) => number): void {
    const { blocks } = tables;
    const { open, sink } = this;
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
          id = sink.add(-1, blocks.address[k]!, blocks.requestedSize[k]!, blocks.stack[k]!, stream);
          // Pending at dump with no free_requested in the window: the user freed it before.
          if (state === BlockState.pendingFree) sink.setFreeRequested(id, FREED_BEFORE_WINDOW);
        }
        sink.setBlock(id, k);
        sink.setEnd(id, n);
      }
    }
    this.facts.unmatchedAllocs = open.size;
    open.forEachValue((id) => sink.setEnd(id, n));
  }
}

/** The allocation table's columns, grown as pairing finds allocations. */
class AllocationTable implements PairingSink {
  count = 0;
  start: Int32Array;
  freeRequested: Int32Array;
  end: Int32Array;
  addr: Float64Array;
  size: Float64Array;
  stack: Int32Array;
  stream: Uint16Array;
  block: Int32Array;

  constructor(capacity: number) {
    this.start = new Int32Array(capacity);
    this.freeRequested = new Int32Array(capacity);
    this.end = new Int32Array(capacity);
    this.addr = new Float64Array(capacity);
    this.size = new Float64Array(capacity);
    this.stack = new Int32Array(capacity);
    this.stream = new Uint16Array(capacity);
    this.block = new Int32Array(capacity);
  }

  add(start: number, addr: number, size: number, stack: number, stream: number): number {
    if (this.count === this.start.length) this.grow();
    const id = this.count++;
    this.start[id] = start;
    this.freeRequested[id] = -1;
    this.end[id] = -1;
    this.addr[id] = addr;
    this.size[id] = size;
    this.stack[id] = stack;
    this.stream[id] = stream;
    this.block[id] = -1;
    return id;
  }

  setFreeRequested(id: number, entry: number): void {
    this.freeRequested[id] = entry;
  }

  setEnd(id: number, entry: number): void {
    this.end[id] = entry;
  }

  setBlock(id: number, block: number): void {
    this.block[id] = block;
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
    this.block = grown(this.block, new Int32Array(n));
  }

  result(ofEntry: Int32Array, facts: AllocationFacts): Allocations {
    const c = this.count;
    return {
      count: c,
      start: this.start.subarray(0, c),
      freeRequested: this.freeRequested.subarray(0, c),
      end: this.end.subarray(0, c),
      addr: this.addr.subarray(0, c),
      size: this.size.subarray(0, c),
      stack: this.stack.subarray(0, c),
      stream: this.stream.subarray(0, c),
      block: this.block.subarray(0, c),
      ofEntry,
      facts,
    };
  }
}

/** Pairing with nothing written: ids count the allocations found. */
class NoTable implements PairingSink {
  private count = 0;

  add(): number {
    return this.count++;
  }

  setFreeRequested(): void {}

  setEnd(): void {}

  setBlock(): void {}
}

function grown<T extends Int32Array | Float64Array | Uint16Array>(old: T, bigger: T): T {
  bigger.set(old);
  return bigger;
}
