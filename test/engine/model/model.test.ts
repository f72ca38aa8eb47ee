import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/engine/analyses/summary/summary.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { stateAfter } from '../../../src/engine/model/state-at.js';

const SEG = 0x7f0000000000;
const MiB = 1024 * 1024;
const frame = (name: string, line: number) => ({ filename: 'train.py', line, name });
const f1 = [frame('forward', 10), frame('main', 99)];

/** A hand-made snapshot whose every figure can be worked out on paper. */
const snapshot = {
  segments: [
    {
      device: 0,
      address: SEG,
      total_size: 2 * MiB,
      stream: 0,
      segment_type: 'small',
      frames: [],
      blocks: [
        { address: SEG, size: 512, requested_size: 100, state: 'active_allocated', frames: f1 },
        { address: SEG + 512, size: 1024, requested_size: 1000, state: 'active_pending_free', frames: [] },
        { address: SEG + 1536, size: 2 * MiB - 1536, requested_size: 0, state: 'inactive', frames: [] },
      ],
    },
  ],
  device_traces: [
    [
      { action: 'segment_alloc', addr: SEG, size: 2 * MiB, stream: 0, time_us: 1000 },
      { action: 'alloc', addr: SEG, size: 100, stream: 0, time_us: 1001, frames: f1 },
      { action: 'alloc', addr: SEG + 512, size: 1000, stream: 0, time_us: 1002 },
      { action: 'alloc', addr: SEG + 1536, size: 300, stream: 0, time_us: 1003 },
      { action: 'free_requested', addr: SEG + 1536, size: 300, stream: 0, time_us: 1004 },
      { action: 'free_completed', addr: SEG + 1536, size: 300, stream: 0, time_us: 1005 },
      { action: 'free_requested', addr: SEG + 512, size: 1000, stream: 0, time_us: 1006 },
      { action: 'free_requested', addr: SEG + 4 * MiB, size: 50, stream: 0, time_us: 1007 },
      { action: 'free_completed', addr: SEG + 4 * MiB, size: 50, stream: 0, time_us: 1010 },
    ],
  ],
};

const load = () => loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(snapshot)));

describe('model on a hand-made trace', () => {
  it('rebuilds the running totals backwards from the dump', () => {
    const d = load().devices[0]!;
    expect([...d.totals.allocated]).toEqual([50, 150, 1150, 1450, 1150, 1150, 150, 100, 100]);
    expect([...d.totals.active]).toEqual([50, 150, 1150, 1450, 1450, 1150, 1150, 1150, 1100]);
    expect(d.totals.reserved[0]).toBe(2 * MiB);
    expect(d.totals.start.reserved).toBe(0);
    expect(d.totals.peak.allocated).toBe(1450);
    expect(d.totals.peakAllocatedAt).toBe(3);
  });

  it('pairs allocations and says what happened before recording', () => {
    const a = load().devices[0]!.allocations;
    expect(a.count).toBe(4);
    expect([...a.start]).toEqual([1, 2, 3, -1]);
    expect([...a.freeRequested]).toEqual([-1, 6, 4, 7]);
    expect([...a.end]).toEqual([9, 9, 5, 8]);
    expect([...a.block]).toEqual([0, 1, -1, -1]);
    expect(a.facts.orphanFrees).toBe(1);
    expect(a.facts.orphanFreeBytes).toBe(50);
    expect(a.facts.blocksBeforeRecording).toBe(0);
  });

  it('answers the live set and reserved ranges at any event', () => {
    const s = load();
    const d = s.devices[0]!;
    expect([...d.live.aliveAfter(-1)]).toEqual([3]);
    expect([...d.live.aliveAfter(3)]).toEqual([0, 1, 2, 3]);
    expect([...d.live.aliveAfter(5)]).toEqual([0, 1, 3]);
    expect([...d.live.aliveAfter(8)]).toEqual([0, 1]);
    expect(stateAfter(s, d, -1).reserved).toEqual([]);
    expect(stateAfter(s, d, 0).reserved).toEqual([
      { address: SEG, size: 2 * MiB, segment: 0, event: -1, stream: 0 },
    ]);
  });

  it('gives a block only the dump shows the stream of its segment', () => {
    const side = {
      segments: [
        {
          device: 0,
          address: SEG,
          total_size: 2 * MiB,
          stream: 7,
          segment_type: 'small',
          frames: [],
          blocks: [{ address: SEG, size: 512, requested_size: 100, state: 'active_allocated', frames: [] }],
        },
      ],
      device_traces: [[{ action: 'alloc', addr: SEG + 4 * MiB, size: 8, stream: 0, time_us: 1 }]],
    };
    const r = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(side)));
    const a = r.devices[0]!.allocations;
    const rawStream = (id: number) => r.traceColumns.streams[a.stream[id]!];
    expect([...a.start]).toEqual([0, -1]);
    expect([rawStream(0), rawStream(1)]).toEqual([0, 7]);
  });

  it('keeps a freed segment apart from a later one at the same address', () => {
    // The driver hands S1's freed range to S2 (another stream and pool): before the free, the range
    // is S1's, whatever sits at that address at dump.
    const S2 = 0x5f00;
    const reuse = {
      segments: [
        {
          device: 0,
          address: SEG,
          total_size: 20 * MiB,
          stream: S2,
          segment_type: 'large',
          frames: [],
          blocks: [],
        },
      ],
      device_traces: [
        [
          { action: 'segment_alloc', addr: SEG, size: 2 * MiB, stream: 7, time_us: 1 },
          { action: 'segment_free', addr: SEG, size: 2 * MiB, stream: 7, time_us: 2 },
          { action: 'segment_alloc', addr: SEG, size: 20 * MiB, stream: S2, time_us: 3 },
        ],
      ],
    };
    const r = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(reuse)));
    const dev = r.devices[0]!;
    expect(stateAfter(r, dev, 0).reserved).toEqual([
      { address: SEG, size: 2 * MiB, segment: -1, event: 0, stream: 7 },
    ]);
    expect(stateAfter(r, dev, 1).reserved).toEqual([]);
    expect(stateAfter(r, dev, 2).reserved).toEqual([
      { address: SEG, size: 20 * MiB, segment: 0, event: -1, stream: S2 },
    ]);
  });

  it('interns stacks once and keeps frames innermost first', () => {
    const s = load();
    const d = s.devices[0]!;
    const id = d.trace.stack[1]!;
    expect(id).toBe(s.tables.blocks.stack[0]);
    expect([...s.stacks.stack(id)].map((f) => s.stacks.frame(f).name)).toEqual(['forward', 'main']);
  });

  it('summarizes with the corpus definitions', () => {
    const dev = summarize(load()).devices[0]!;
    expect(dev.allocated_bytes).toBe(512);
    expect(dev.active_bytes).toBe(1536);
    expect(dev.requested_bytes).toBe(1100);
    expect(dev.inactive_split_bytes).toBe(2 * MiB - 1536);
    expect(dev.trace_actions).toEqual({ alloc: 3, free_completed: 2, free_requested: 3, segment_alloc: 1 });
    expect(dev.trace_span_us).toBe(10);
    expect(dev.trace_start_allocated_bytes).toBe(50);
    expect(dev.trace_peak_allocated_bytes).toBe(1450);
    expect(dev.warnings.join(' ')).toMatch(/1 frees in the trace have no alloc/);
  });

  it('pairs a trace of thousands of frees whose allocs fell out of the ring buffer', () => {
    // More orphan frees than the allocation table starts with room for (allocs + blocks + 1024).
    const n = 3000;
    const trace = Array.from({ length: n }, (_, i) => ({
      action: i % 2 === 0 ? 'free_requested' : 'free_completed',
      addr: SEG + 512 * Math.floor(i / 2),
      size: 64,
      stream: 0,
      time_us: 2000 + i,
    }));
    const d = loadSnapshotBytes(
      new TextEncoder().encode(JSON.stringify({ segments: [], device_traces: [trace] })),
    ).devices[0]!;
    expect(d.allocations.count).toBe(n / 2);
    expect(d.allocations.facts.orphanFrees).toBe(n / 2);
    expect(Array.from(d.allocations.end.subarray(0, 3))).toEqual([1, 3, 5]);
  });
});
