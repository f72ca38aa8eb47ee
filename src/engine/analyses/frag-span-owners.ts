import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';

/**
 * Who owns each piece a segment_alloc/map reserves, in the sense of the backward replay of
 * `state-at.ts`: the first segment_free/unmap after it that releases the piece (that replay
 * unions released ranges into one span per release), or, when none does, the dump-time segment
 * holding it. Pieces with the same owner that touch form one span, as they do in that replay.
 * An owner is a release entry (>= 0) or `-1 - segmentId` for a dump segment.
 */
export interface ReservedPieces {
  /** Triples (lo, hi, owner) per reserving entry; pieces in no dump segment and never released are left out. */
  byEntry: Map<number, number[]>;
}

export function dumpOwner(segmentId: number): number {
  return -1 - segmentId;
}

export function segmentOfOwner(owner: number): number {
  return owner < 0 ? -1 - owner : -1;
}

export function reservedPieces(s: Snapshot, d: DeviceModel): ReservedPieces {
  const t = d.trace;
  const released = new IntervalOwners();
  const dump = dumpSegmentsByAddress(s, d);
  const byEntry = new Map<number, number[]>();
  const action = t.action;
  for (let i = t.length - 1; i >= 0; i--) {
    const a = action[i]!;
    if (a < Action.segment_alloc || a > Action.segment_unmap) continue;
    const lo = t.addr[i]!;
    const hi = lo + t.size[i]!;
    if (a === Action.segment_free || a === Action.segment_unmap) released.assign(lo, hi, i);
    else {
      const out: number[] = [];
      released.pieces(lo, hi, (plo, phi, owner) => {
        if (owner >= 0) out.push(plo, phi, owner);
        else dump.pieces(plo, phi, out);
      });
      byEntry.set(i, out);
    }
  }
  return { byEntry };
}

/** Disjoint address intervals, each with the release entry that owns it. */
class IntervalOwners {
  private readonly lo: number[] = [];
  private readonly hi: number[] = [];
  private readonly owner: number[] = [];

  assign(lo: number, hi: number, owner: number): void {
    const keepLo: number[] = [];
    const keepHi: number[] = [];
    const keepOwner: number[] = [];
    for (let j = 0; j < this.lo.length; j++) {
      const a = this.lo[j]!;
      const b = this.hi[j]!;
      const o = this.owner[j]!;
      if (b <= lo || a >= hi) this.push3(keepLo, keepHi, keepOwner, a, b, o);
      else {
        if (a < lo) this.push3(keepLo, keepHi, keepOwner, a, lo, o);
        if (b > hi) this.push3(keepLo, keepHi, keepOwner, hi, b, o);
      }
    }
    this.push3(keepLo, keepHi, keepOwner, lo, hi, owner);
    const order = keepLo.map((_, j) => j).sort((x, y) => keepLo[x]! - keepLo[y]!);
    this.lo.length = this.hi.length = this.owner.length = 0;
    for (const j of order) this.push3(this.lo, this.hi, this.owner, keepLo[j]!, keepHi[j]!, keepOwner[j]!);
  }

  /** Calls `f` for every piece of [lo, hi) in order; owner -1 where no release covers it. */
  pieces(lo: number, hi: number, f: (lo: number, hi: number, owner: number) => void): void {
    let cursor = lo;
    for (let j = 0; j < this.lo.length && cursor < hi; j++) {
      const a = Math.max(this.lo[j]!, cursor);
      const b = Math.min(this.hi[j]!, hi);
      if (b <= a) continue;
      if (a > cursor) f(cursor, a, -1);
      f(a, b, this.owner[j]!);
      cursor = b;
    }
    if (cursor < hi) f(cursor, hi, -1);
  }

  private push3(lo: number[], hi: number[], owner: number[], a: number, b: number, o: number): void {
    lo.push(a);
    hi.push(b);
    owner.push(o);
  }
}

/** The device's dump-time segments by address, to clip a never-released piece to them. */
function dumpSegmentsByAddress(s: Snapshot, d: DeviceModel) {
  const ids = [...d.segmentIds].sort((x, y) => s.tables.segments[x]!.address - s.tables.segments[y]!.address);
  return {
    pieces(lo: number, hi: number, out: number[]): void {
      for (const id of ids) {
        const seg = s.tables.segments[id]!;
        const a = Math.max(lo, seg.address);
        const b = Math.min(hi, seg.address + seg.totalSize);
        if (b > a) out.push(a, b, dumpOwner(id));
      }
    },
  };
}
