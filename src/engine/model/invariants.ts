import { formatBytes } from '../base/format.js';
import type { RowList } from './row-list.js';
import { type BlockColumns, BlockState, newBlocks, type Segment, type SegmentTables } from './segments.js';
import type { RunningTotals } from './totals.js';
import type { TraceColumns } from './trace-columns.js';

/**
 * What the allocator can never produce, checked once at load: sizes below zero, a block larger
 * than its segment or outside it, blocks overlapping in one segment, segments overlapping on a
 * device, an active block whose requested size is outside 0..its size, a trace that allocates
 * more than the dump holds. Such a file (hand-edited, converted by a buggy tool, corrupt) would
 * otherwise give "reserved -188 MiB" or a fragmentation report whose parts exceed reserved.
 *
 * Each violation is named with its count and first offender, and what was done about it: an
 * impossible segment or block is left out of every figure (the figures then describe the rest,
 * and say so), an impossible trace size or requested size counts as the nearest possible value,
 * a curve the trace takes below zero is raised (RunningTotals.lift). Nothing that is left could
 * make a total contradict its parts.
 */
export interface Violation {
  kind: ViolationKind;
  count: number;
  /** The first offender, as a user finds it in the file ("segment 3 block 1, size -4.00 KiB"). */
  first: string;
  /** How many of what, and the first: "1 segment has a negative total_size (first: ...)". */
  what: string;
  /** The warning line: what, how many, the first, and what memlens did about it. */
  text: string;
}

export type ViolationKind =
  | 'negative_segment_size'
  | 'overlapping_segments'
  | 'negative_block_size'
  | 'block_larger_than_segment'
  | 'block_outside_segment'
  | 'overlapping_blocks'
  | 'requested_outside_block'
  | 'negative_trace_size'
  | 'trace_beyond_dump';

const SAYS: Record<ViolationKind, [one: string, many: string, done: string]> = {
  negative_segment_size: [
    'segment has a negative total_size',
    'segments have a negative total_size',
    'left out of every figure, with their blocks',
  ],
  overlapping_segments: [
    "segment overlaps an earlier segment's addresses on its device",
    "segments overlap earlier segments' addresses on their device",
    'left out of every figure, with their blocks (reserved would count those bytes twice)',
  ],
  negative_block_size: [
    'block has a negative size',
    'blocks have a negative size',
    'left out of every figure',
  ],
  block_larger_than_segment: [
    'block is larger than its segment',
    'blocks are larger than their segment',
    'left out of every figure',
  ],
  block_outside_segment: [
    'block lies outside its segment',
    "blocks lie outside their segment's addresses",
    'left out of every figure',
  ],
  overlapping_blocks: [
    'block overlaps the block before it',
    'blocks overlap the block before them',
    'left out of every figure',
  ],
  requested_outside_block: [
    "active block's requested_size is outside 0..its size",
    "active blocks' requested_size is outside 0..their size",
    'counted as the nearest of 0 and the block size',
  ],
  negative_trace_size: [
    'trace entry has a negative size',
    'trace entries have a negative size',
    'counted as 0 bytes',
  ],
  trace_beyond_dump: [
    "device's trace allocates more than its dump holds (undone from the dump, a curve goes below zero)",
    "devices' traces allocate more than their dumps hold (undone from the dump, a curve goes below zero)",
    'each such curve is raised by that much, so trace figures are lower bounds',
  ],
};

class Tally {
  private readonly found = new Map<ViolationKind, { count: number; first: string }>();

  add(kind: ViolationKind, first: () => string): void {
    const v = this.found.get(kind);
    if (v === undefined) this.found.set(kind, { count: 1, first: first() });
    else v.count++;
  }

  list(): Violation[] {
    return [...this.found].map(([kind, { count, first }]) => {
      const [one, many, done] = SAYS[kind];
      const what = `${count.toLocaleString('en-US')} ${count === 1 ? one : many} (first: ${first})`;
      return { kind, count, first, what, text: `impossible in this file: ${what}; ${done}.` };
    });
  }
}

const bytes = (n: number): string => (n < 0 ? `-${formatBytes(-n)}` : formatBytes(n));

/**
 * The segment tables with every impossible segment and block left out (the same object when
 * there is none), and the violations found. Segment and block numbers in the messages are the
 * file's, as `segments[i].blocks[j]`.
 */
export function checkSegments(tables: SegmentTables): { tables: SegmentTables; violations: Violation[] } {
  const tally = new Tally();
  const b = tables.blocks;
  const keepSegment = tables.segments.map((seg, i) => segmentPossible(seg, i, tally));
  overlappingSegments(tables.segments, keepSegment, tally);
  const keepBlock = new Uint8Array(b.length);
  tables.segments.forEach((seg, i) => {
    if (keepSegment[i]) blocksPossible(seg, i, b, keepBlock, tally);
  });
  const violations = tally.list();
  if (violations.length === 0) return { tables, violations };
  return { tables: compact(tables, keepSegment, keepBlock), violations };
}

function segmentPossible(seg: Segment, i: number, tally: Tally): boolean {
  if (seg.totalSize >= 0) return true;
  tally.add('negative_segment_size', () => `segment ${i}, total_size ${bytes(seg.totalSize)}`);
  return false;
}

/** Per device, by address: a segment that starts before the previous kept one ends overlaps it. */
function overlappingSegments(segments: Segment[], keep: boolean[], tally: Tally): void {
  const order = segments
    .map((_, i) => i)
    .filter((i) => keep[i])
    .sort(
      (x, y) =>
        segments[x]!.device - segments[y]!.device || segments[x]!.address - segments[y]!.address || x - y,
    );
  let prev = -1;
  for (const i of order) {
    const seg = segments[i]!;
    const p = prev < 0 ? undefined : segments[prev]!;
    if (p !== undefined && p.device === seg.device && seg.address < p.address + p.totalSize) {
      keep[i] = false;
      tally.add(
        'overlapping_segments',
        () =>
          `segment ${i} at 0x${seg.address.toString(16)} (${bytes(seg.totalSize)}) inside segment ${prev} at 0x${p.address.toString(16)} (${bytes(p.totalSize)})`,
      );
      continue;
    }
    prev = i;
  }
}

function blocksPossible(seg: Segment, i: number, b: BlockColumns, keep: Uint8Array, tally: Tally): void {
  const end = seg.address + seg.totalSize;
  let cursor = seg.address;
  for (let j = 0; j < seg.blockCount; j++) {
    const k = seg.firstBlock + j;
    const at = b.address[k]!;
    const size = b.size[k]!;
    const where = `segment ${i} block ${j}`;
    if (size < 0) tally.add('negative_block_size', () => `${where}, size ${bytes(size)}`);
    else if (size > seg.totalSize)
      tally.add(
        'block_larger_than_segment',
        () => `${where}, size ${bytes(size)} in a segment of ${bytes(seg.totalSize)}`,
      );
    else if (at < seg.address || at + size > end)
      tally.add(
        'block_outside_segment',
        () =>
          `${where} at 0x${at.toString(16)} (${bytes(size)}), segment 0x${seg.address.toString(16)}..0x${end.toString(16)}`,
      );
    else if (at < cursor)
      tally.add(
        'overlapping_blocks',
        () => `${where} at 0x${at.toString(16)}, previous block ends at 0x${cursor.toString(16)}`,
      );
    else {
      keep[k] = 1;
      cursor = at + size;
      const requested = b.requestedSize[k]!;
      // Only an active block's requested_size counts: PyTorch leaves a freed block's stale one.
      const active = b.state[k] === BlockState.allocated || b.state[k] === BlockState.pendingFree;
      if (active && (requested < 0 || requested > size)) {
        tally.add(
          'requested_outside_block',
          () => `${where}, requested ${bytes(requested)} of ${bytes(size)}`,
        );
        b.requestedSize[k] = Math.min(Math.max(requested, 0), size);
      }
    }
  }
}

/** The tables without the segments and blocks not kept, renumbered. */
function compact(tables: SegmentTables, keepSegment: boolean[], keepBlock: Uint8Array): SegmentTables {
  const from = tables.blocks;
  const n = keepBlock.reduce((sum, k) => sum + k, 0);
  const to = newBlocks(n);
  const segments: Segment[] = [];
  tables.segments.forEach((seg, i) => {
    if (!keepSegment[i]) return;
    const firstBlock = to.length;
    for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
      if (!keepBlock[k]) continue;
      const t = to.length++;
      to.address[t] = from.address[k]!;
      to.size[t] = from.size[k]!;
      to.requestedSize[t] = from.requestedSize[k]!;
      to.state[t] = from.state[k]!;
      to.segment[t] = segments.length;
      to.stack[t] = from.stack[k]!;
    }
    segments.push({ ...seg, firstBlock, blockCount: to.length - firstBlock });
  });
  return { ...tables, segments, blocks: to };
}

/**
 * Trace entries with a negative size count as 0 bytes (in the shared columns, before any device
 * reads them): an alloc and its free of the same impossible size cancel either way, and no
 * running total can go below zero by them.
 */
export function checkTraceSizes(cols: TraceColumns, lists: (RowList | undefined)[]): Violation[] {
  const tally = new Tally();
  lists.forEach((rows, device) => {
    if (rows === undefined) return;
    for (let i = 0; i < rows.count; i++) {
      const row = rows.rows === null ? rows.first + i : rows.rows[i]!;
      const size = cols.size[row]!;
      if (!(size < 0)) continue;
      tally.add(
        'negative_trace_size',
        () => `device ${device} entry ${i.toLocaleString('en-US')}, size ${bytes(size)}`,
      );
      cols.size[row] = 0;
    }
  });
  return tally.list();
}

/** Devices whose running totals had to be lifted above zero (see RunningTotals.lift). */
export function checkTotals(devices: { device: number; totals: RunningTotals }[]): Violation[] {
  const tally = new Tally();
  for (const { device, totals } of devices) {
    const parts = (['allocated', 'active', 'reserved'] as const)
      .filter((k) => totals.lift[k] > 0)
      .map((k) => `${k} by ${bytes(totals.lift[k])}`);
    if (parts.length > 0) tally.add('trace_beyond_dump', () => `device ${device}, short ${parts.join(', ')}`);
  }
  return tally.list();
}
