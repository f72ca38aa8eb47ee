import { lowerBound } from '../../model/lower-bound.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';

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

/** Disjoint address intervals, sorted, each with the release entry that owns it. */
class IntervalOwners {
  private readonly lo: number[] = [];
  private readonly hi: number[] = [];
  private readonly owner: number[] = [];

  assign(lo: number, hi: number, owner: number): void {
    const first = lowerBound(this.hi, lo, true);
    let last = first;
    while (last < this.lo.length && this.lo[last]! < hi) last++;
    const put = { lo: [lo], hi: [hi], owner: [owner] };
    // What the new interval does not cover of the first and last ones it overlaps stays theirs.
    if (first < last && this.lo[first]! < lo) this.before(put, this.lo[first]!, lo, this.owner[first]!);
    if (first < last && this.hi[last - 1]! > hi)
      this.after(put, hi, this.hi[last - 1]!, this.owner[last - 1]!);
    this.lo.splice(first, last - first, ...put.lo);
    this.hi.splice(first, last - first, ...put.hi);
    this.owner.splice(first, last - first, ...put.owner);
  }

  /** Calls `f` for every piece of [lo, hi) in order; owner -1 where no release covers it. */
  pieces(lo: number, hi: number, f: (lo: number, hi: number, owner: number) => void): void {
    let cursor = lo;
    for (let j = lowerBound(this.hi, lo, true); j < this.lo.length && cursor < hi; j++) {
      const a = Math.max(this.lo[j]!, cursor);
      const b = Math.min(this.hi[j]!, hi);
      if (b <= a) break;
      if (a > cursor) f(cursor, a, -1);
      f(a, b, this.owner[j]!);
      cursor = b;
    }
    if (cursor < hi) f(cursor, hi, -1);
  }

  private before(put: Record<'lo' | 'hi' | 'owner', number[]>, a: number, b: number, o: number): void {
    put.lo.unshift(a);
    put.hi.unshift(b);
    put.owner.unshift(o);
  }

  private after(put: Record<'lo' | 'hi' | 'owner', number[]>, a: number, b: number, o: number): void {
    put.lo.push(a);
    put.hi.push(b);
    put.owner.push(o);
  }
}

/** The device's dump-time segments by address, to clip a never-released piece to them. */
function dumpSegmentsByAddress(s: Snapshot, d: DeviceModel) {
  const segs = s.tables.segments;
  const ids = [...d.segmentIds].sort((x, y) => segs[x]!.address - segs[y]!.address);
  const ends = ids.map((id) => segs[id]!.address + segs[id]!.totalSize);
  return {
    pieces(lo: number, hi: number, out: number[]): void {
      for (let j = lowerBound(ends, lo, true); j < ids.length && segs[ids[j]!]!.address < hi; j++) {
        const seg = segs[ids[j]!]!;
        const a = Math.max(lo, seg.address);
        const b = Math.min(hi, seg.address + seg.totalSize);
        if (b > a) out.push(a, b, dumpOwner(ids[j]!));
      }
    },
  };
}
