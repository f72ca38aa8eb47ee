import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { Action } from '../../model/trace-columns.js';
import {
  columnSamples,
  emitColumn,
  RunBuilder,
  StackList,
  type TimelineLod,
  type TimelineRequest,
} from '../timeline/timeline-lod.js';

/**
 * pytorch.org/memory_viz's "Active Cached Segment Timeline": reserved memory over time, each
 * stretch the allocator got from cudaMalloc (or mapped, with expandable segments) drawn as the
 * active-memory timeline draws allocations, stacked oldest at the bottom, so the stack top is
 * the reserved curve.
 */
export interface SegmentPieces {
  count: number;
  /** Alive after entries start..end-1 (start -1: reserved before the recorded window). */
  start: Int32Array;
  end: Int32Array;
  address: Float64Array;
  size: Float64Array;
}

/**
 * The pieces of reserved memory, rebuilt backwards from the dump's segments as the reserved curve
 * is: going back, a segment_free or segment_unmap opens a piece (it was reserved before it), and
 * a segment_alloc or segment_map closes the part of the open pieces it covers (that part began
 * there). An expandable segment mapped in several steps and unmapped in one is split where the
 * steps were, so after every entry the live pieces hold exactly the reserved bytes.
 */
export function segmentPieces(s: Snapshot, d: DeviceModel): SegmentPieces {
  const t = d.trace;
  const done = new PieceList();
  let open: Piece[] = d.segmentIds.map((id) => {
    const g = s.tables.segments[id]!;
    return { address: g.address, size: g.totalSize, end: t.length };
  });
  for (let i = t.length - 1; i >= 0; i--) {
    const action = t.action[i]!;
    const a = t.addr[i]!;
    const size = t.size[i]!;
    if (Number.isNaN(a) || Number.isNaN(size)) continue;
    if (action === Action.segment_free || action === Action.segment_unmap)
      open.push({ address: a, size, end: i });
    else if (action === Action.segment_alloc || action === Action.segment_map)
      open = closeRange(open, a, a + size, i, done);
  }
  for (const p of open) done.add(-1, p);
  return done.sorted();
}

interface Piece {
  address: number;
  size: number;
  end: number;
}

/** The open pieces with [from, to) begun at entry k: its parts move to `done`, what is left stays open. */
function closeRange(open: Piece[], from: number, to: number, k: number, done: PieceList): Piece[] {
  const left: Piece[] = [];
  for (const p of open) {
    const a = Math.max(from, p.address);
    const b = Math.min(to, p.address + p.size);
    if (a >= b) {
      left.push(p);
      continue;
    }
    done.add(k, { address: a, size: b - a, end: p.end });
    if (p.address < a) left.push({ address: p.address, size: a - p.address, end: p.end });
    if (b < p.address + p.size) left.push({ address: b, size: p.address + p.size - b, end: p.end });
  }
  return left;
}

class PieceList {
  private readonly rows: { start: number; piece: Piece }[] = [];

  add(start: number, piece: Piece): void {
    if (piece.end > start) this.rows.push({ start, piece });
  }

  /** Oldest first (then by address): the stacking order, and piece ids in it. */
  sorted(): SegmentPieces {
    const rows = this.rows.sort((x, y) => x.start - y.start || x.piece.address - y.piece.address);
    return {
      count: rows.length,
      start: Int32Array.from(rows, (r) => r.start),
      end: Int32Array.from(rows, (r) => r.piece.end),
      address: Float64Array.from(rows, (r) => r.piece.address),
      size: Float64Array.from(rows, (r) => r.piece.size),
    };
  }
}

/**
 * The segment timeline's level of detail, in the shape of the allocation timeline's (runs name
 * piece ids): each column shows the state after its entry with the most reserved memory.
 */
export function segmentTimelineLod(d: DeviceModel, p: SegmentPieces, req: TimelineRequest): TimelineLod {
  const columns = Math.max(1, Math.floor(req.columns));
  const reservedAt = (k: number): number => (k < 0 ? d.totals.start.reserved : d.totals.reserved[k]!);
  const sample = columnSamples(d, req, columns, (k, best) => reservedAt(k) > reservedAt(best));
  const reserved = Float64Array.from(sample, reservedAt);
  const yMax = reserved.reduce((m, r) => Math.max(m, r), Math.max(1, req.yTop ?? 0));
  const runs = new RunBuilder();
  const stack = new StackList(p.count);
  const minBytes = yMax / Math.max(1, req.rows);
  // Samples only move forward: pieces join in start order (the stacking order) and leave at their end.
  let next = 0;
  const live = new Set<number>();
  for (let c = 0; c < columns; c++) {
    const k = sample[c]!;
    for (const id of live) {
      if (p.end[id]! <= k) {
        stack.unlink(id);
        live.delete(id);
      }
    }
    for (; next < p.count && p.start[next]! <= k; next++) {
      if (p.end[next]! <= k) continue;
      stack.push(next);
      live.add(next);
    }
    emitColumn(stack, p.size, c, minBytes, runs);
  }
  // The stack top is the reserved curve; its own array, as consumers take each column separately.
  return { columns, yMax, sample, active: reserved.slice(), reserved, ...runs.result() };
}

/** The piece drawn at `bytes` above the baseline after entry `k` (-1 above the stack top). */
export function pieceAt(p: SegmentPieces, k: number, bytes: number): number {
  let y = 0;
  for (let id = 0; id < p.count && p.start[id]! <= k; id++) {
    if (p.end[id]! <= k) continue;
    y += p.size[id]!;
    if (bytes < y) return id;
  }
  return -1;
}
