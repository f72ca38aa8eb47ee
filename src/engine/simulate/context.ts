/**
 * What the replay needs to know about a file beyond its trace: which simulator stream stands for
 * each raw cudaStream_t, which private pool each `segment_pool_id` is, and which recorded
 * allocations went to a private pool (traces before 2026 carry no pool id: an allocation belongs
 * to the pool of the dump-time segment holding its address, once that segment exists).
 */
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';

export class SimContext {
  /** Raw cudaStream_t of each simulator stream id (the trace's ids first). */
  readonly rawStreams: number[];
  private readonly streamIds = new Map<number, number>();
  private readonly poolIds = new Map<string, number>();
  /** Private pool index (0: default) of each allocation id. */
  readonly poolOfAllocation: Uint16Array;

  constructor(s: Snapshot, d: DeviceModel) {
    this.rawStreams = [...s.traceColumns.streams];
    this.rawStreams.forEach((raw, id) => {
      this.streamIds.set(raw, id);
    });
    for (const id of d.segmentIds) {
      const seg = s.tables.segments[id]!;
      this.streamId(seg.stream);
      this.privatePoolOf(seg.poolId);
    }
    this.poolOfAllocation = routeAllocations(s, d, this);
  }

  streamId(raw: number): number {
    let id = this.streamIds.get(raw);
    if (id === undefined) {
      id = this.rawStreams.length;
      this.rawStreams.push(raw);
      this.streamIds.set(raw, id);
    }
    return id;
  }

  /** Streams in the order of their raw values, the first key of PyTorch's free sets. */
  streamOrder(): number[] {
    return this.rawStreams.map((_, i) => i).sort((x, y) => this.rawStreams[x]! - this.rawStreams[y]!);
  }

  privatePoolOf(poolId: readonly [number, number]): number {
    if (poolId[0] === 0 && poolId[1] === 0) return 0;
    const key = `${poolId[0]},${poolId[1]}`;
    let i = this.poolIds.get(key);
    if (i === undefined) {
      i = this.poolIds.size + 1;
      this.poolIds.set(key, i);
    }
    return i;
  }

  get privatePools(): number {
    return this.poolIds.size;
  }

  poolIdOf(index: number): readonly [number, number] {
    for (const [key, i] of this.poolIds)
      if (i === index) return key.split(',').map(Number) as [number, number];
    return [0, 0];
  }
}

function routeAllocations(s: Snapshot, d: DeviceModel, ctx: SimContext): Uint16Array {
  const al = d.allocations;
  const out = new Uint16Array(al.count);
  const privateSegs = d.segmentIds
    .map((id) => s.tables.segments[id]!)
    .filter((seg) => seg.poolId[0] !== 0 || seg.poolId[1] !== 0);
  if (privateSegs.length === 0) return out;
  // A segment exists from its last segment_alloc in the window (or from before the window).
  const born = new Map<number, number>();
  for (let i = 0; i < d.trace.length; i++) {
    if (d.trace.action[i] === Action.segment_alloc) born.set(d.trace.addr[i]!, i);
  }
  for (let id = 0; id < al.count; id++) {
    const addr = al.addr[id]!;
    for (const seg of privateSegs) {
      if (addr < seg.address || addr >= seg.address + seg.totalSize) continue;
      if (al.start[id]! > (born.get(seg.address) ?? -1)) out[id] = ctx.privatePoolOf(seg.poolId);
      break;
    }
  }
  return out;
}
