/**
 * The generator's expandable-segment model on hand-made request sequences whose outcome the
 * allocator spec spells out (§3.1 best fit, §5.2 growth): addresses and segment_map events are
 * worked out from the spec's rules here, not taken from a run.
 */
import { describe, expect, it } from 'vitest';
import { Allocator } from '../../../scripts/synth/allocator.js';
import { Clock } from '../../../scripts/synth/events.js';
import { StackTable } from '../../../scripts/synth/frames.js';
import { Action } from '../../../src/engine/model/trace-columns.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const VA_BASE = 0x7f00_0000_0000;
const STACK = new StackTable().stack('test', () => [['step', 'train.py', 1]]);

function expandableAllocator(): { a: Allocator; base: number } {
  const a = new Allocator(
    { totalMemory: 80 * GiB, outsideMemory: 0, vaBase: VA_BASE, expandable: true, poolCount: 1 },
    new Clock(0),
  );
  // The large pool's range is reserved on first use; its base is where the first page lands.
  const first = a.malloc(MiB + 512, 0, 0, STACK);
  const base = first.addr;
  a.free(first, STACK);
  a.queue = [];
  return { a, base };
}

function maps(a: Allocator): [number, number][] {
  return a.queue.filter((e) => e.action === Action.segment_map).map((e) => [e.addr, e.size]);
}

describe('generator: expandable segments follow the allocator spec', () => {
  it('§5.2 worked example: a request that outgrows the free block maps the next page and merges', () => {
    const { a, base } = expandableAllocator();
    // The first page [0, 20 MiB) is mapped and wholly free; 5 MiB takes its low end.
    const x = a.malloc(5 * MiB, 0, 0, STACK);
    expect(x.addr).toBe(base);
    // 30 MiB: the free 15 MiB before the unmapped tail grows by one 20 MiB page, then splits.
    const y = a.malloc(30 * MiB, 0, 0, STACK);
    expect(maps(a)).toEqual([[base + 20 * MiB, 20 * MiB]]);
    expect(y.addr).toBe(base + 5 * MiB);
    expect(a.reserved).toBe(40 * MiB);
  });

  it('§3.1: best fit passes over the free block before the unmapped tail for a larger one', () => {
    const { a, base } = expandableAllocator();
    const head = a.malloc(12 * MiB, 0, 0, STACK); // [0, 12) of page 0
    a.malloc(8 * MiB, 0, 0, STACK); // [12, 20): page 0 full
    a.malloc(30 * MiB, 0, 0, STACK); // maps [20, 60), takes [20, 50); [50, 60) free before the tail
    a.free(head, STACK); // [0, 12) free between the range's start and an allocated block
    a.queue = [];
    // Smallest fit is the 10 MiB block at 50 MiB, but it can grow into the unmapped tail, so
    // weighed with the tail it is larger than the 12 MiB block at 0: PyTorch takes the latter.
    const z = a.malloc(9 * MiB, 0, 0, STACK);
    expect(z.addr).toBe(base);
    expect(maps(a)).toEqual([]);
  });

  it('§3.1: the walk compares neighbours only, so it can stop short of the lightest block', () => {
    const { a, base } = expandableAllocator();
    const big = a.malloc(25 * MiB, 0, 0, STACK); // maps [20, 40); takes [0, 25)
    a.malloc(5 * MiB, 0, 0, STACK); // [25, 30)
    const w = a.malloc(30 * MiB, 0, 0, STACK); // [30, 40) grows by [40, 60): takes [30, 60)
    a.malloc(8 * MiB, 0, 0, STACK); // maps [60, 80), takes [60, 68); [68, 80) free before the tail
    a.free(w, STACK);
    a.emptyCache(STACK); // unmaps the one whole page of [30, 60): [40, 60) becomes a hole
    a.free(big, STACK);
    a.queue = [];
    // Free set by size: 10 MiB at 30 (weighs 10 + the 20 MiB hole = 30), 12 MiB at 68 (weighs
    // 12 MiB + the tail), 25 MiB at 0 (weighs 25). The next block is not lighter than the first,
    // so the walk stops at once, although the block at 0 weighs least.
    const z = a.malloc(9 * MiB, 0, 0, STACK);
    expect(z.addr).toBe(base + 30 * MiB);
    expect(maps(a)).toEqual([]);
  });

  it('without a tail block in the way, best fit is the smallest block', () => {
    const { a, base } = expandableAllocator();
    const low = a.malloc(12 * MiB, 0, 0, STACK); // [0, 12)
    a.malloc(8 * MiB, 0, 0, STACK); // [12, 20)
    const mid = a.malloc(10 * MiB, 0, 0, STACK); // maps [20, 40), takes [20, 30)
    a.malloc(10 * MiB, 0, 0, STACK); // [30, 40): page 1 full, no free block before the tail
    a.free(low, STACK);
    a.free(mid, STACK);
    const z = a.malloc(9 * MiB, 0, 0, STACK);
    expect(z.addr).toBe(base + 20 * MiB);
  });
});
