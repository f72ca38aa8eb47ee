/**
 * The simulated allocator's segments as a snapshot shows them (allocator-spec §5.6): one entry
 * per classic segment, and one per contiguous mapped range of an expandable segment.
 */
import { BlockState } from '../model/segments.js';
import type { SimAllocator } from './allocator.js';
import { ALLOCATED, NONE, PENDING, UNMAPPED } from './block-store.js';

export interface SimSegmentView {
  address: number;
  size: number;
  pool: number;
  stream: number;
  expandable: boolean;
  /** Trace entry whose request created the segment (-1: before the window). */
  entry: number;
  blocks: number[];
}

export function segmentViews(a: SimAllocator): SimSegmentView[] {
  const out: SimSegmentView[] = [];
  const sg = a.segments;
  const bl = a.blocks;
  for (let seg = 0; seg < sg.head.length; seg++) {
    let view: SimSegmentView | null = null;
    for (let b = sg.head[seg]!; b !== NONE; b = bl.next[b]!) {
      if (bl.state[b] === UNMAPPED) {
        view = null;
        continue;
      }
      if (view === null) {
        view = {
          address: bl.addr[b]!,
          size: 0,
          pool: sg.pool[seg]!,
          stream: sg.stream[seg]!,
          expandable: sg.expandable[seg]!,
          entry: sg.entry[seg]!,
          blocks: [],
        };
        out.push(view);
      }
      view.size += bl.size[b]!;
      view.blocks.push(b);
    }
  }
  return out.sort((x, y) => x.address - y.address);
}

export function blockStateOf(a: SimAllocator, b: number): BlockState {
  const st = a.blocks.state[b];
  return st === ALLOCATED
    ? BlockState.allocated
    : st === PENDING
      ? BlockState.pendingFree
      : BlockState.inactive;
}
