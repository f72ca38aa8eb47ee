/** The segments as `_snapshot()` reports them: address order, one per contiguous mapped range. */
import type { Allocator } from './allocator.js';
import type { Block, Pool } from './blocks.js';
import type { Stack } from './frames.js';

export interface SegmentView {
  readonly device: number;
  readonly addr: number;
  readonly size: number;
  readonly stream: number;
  readonly pool: Pool;
  readonly expandable: boolean;
  readonly capture: number;
  readonly stack: Stack | null;
  readonly blocks: readonly Block[];
}

export function segmentViews(allocator: Allocator, device: number): SegmentView[] {
  const views: SegmentView[] = [];
  for (const s of allocator.segments) {
    if (!s.expandable) {
      const blocks = [...s.blocks()];
      views.push({
        device,
        addr: s.addr,
        size: s.size,
        stream: s.stream,
        pool: s.pool,
        expandable: false,
        capture: s.capture,
        stack: s.stack,
        blocks,
      });
      continue;
    }
    for (const blocks of mappedRanges(s.head)) {
      const size = blocks.reduce((n, b) => n + b.size, 0);
      views.push({
        device,
        addr: blocks[0]!.addr,
        size,
        stream: s.stream,
        pool: s.pool,
        expandable: true,
        capture: 0,
        stack: null,
        blocks,
      });
    }
  }
  return views.sort((a, b) => a.addr - b.addr);
}

function mappedRanges(head: Block): Block[][] {
  const ranges: Block[][] = [];
  let current: Block[] | null = null;
  for (let b: Block | null = head; b !== null; b = b.next) {
    if (!b.mapped) {
      current = null;
      continue;
    }
    if (current === null) {
      current = [];
      ranges.push(current);
    }
    current.push(b);
  }
  return ranges;
}
