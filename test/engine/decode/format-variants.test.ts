/**
 * Snapshot shapes from PyTorch versions and producers beyond the corpus (docs/format-coverage.md):
 * each is hand-made with the keys that version writes, pickled by the project's writer (protocol 2
 * like the C++ Pickler, 4 like `_dump_snapshot`) and also fed as JSON, and every figure is worked
 * out from what was planted.
 */
import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/engine/analyses/summary/summary.js';
import type { PyValue } from '../../../src/engine/encode/pickle-values.js';
import { PyTuple, pyTuple } from '../../../src/engine/encode/pickle-values.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import type { Snapshot } from '../../../src/engine/model/snapshot.js';
import { snapshotOf } from '../../helpers/snapshot-of.js';

const SEG = 0x7f3a00000000;
const MiB = 1024 * 1024;
const STREAM = 0x55d0c0ffee00;
const f1 = [{ filename: 'train.py', line: 10, name: 'forward' }];

type Entry = Record<string, PyValue>;
const e = (action: string, addr: number, size: number, more: Entry = {}): Entry => ({
  action,
  addr,
  size,
  stream: 0,
  ...more,
});

/** One 2 MiB segment holding one live 512-byte block (100 requested); the rest cached. */
function snapshotWith(trace: Entry[], block: Entry = {}, segment: Entry = {}, top: Entry = {}): Entry {
  const live = { address: SEG, size: 512, requested_size: 100, state: 'active_allocated', frames: f1 };
  const cached = {
    address: SEG + 512,
    size: 2 * MiB - 512,
    requested_size: 0,
    state: 'inactive',
    frames: [],
  };
  const blocks = [{ ...live, ...block }, cached];
  const seg = { device: 0, address: SEG, total_size: 2 * MiB, stream: 0, segment_type: 'small', frames: [] };
  return { segments: [{ ...seg, blocks, ...segment }], device_traces: [trace], ...top };
}

/** The same value loaded three ways: C++-Pickler protocol, Python's default, and JSON. */
function loads(value: Entry): [string, () => Snapshot][] {
  return [
    ['pickle protocol 2', () => snapshotOf(value, 2)],
    ['pickle protocol 4', () => snapshotOf(value, 4)],
    ['json', () => loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(value, tuplesAsLists)))],
  ];
}

// JSON has no tuples: a JSON snapshot writes (int, int) pool ids as lists.
const tuplesAsLists = (_: string, v: unknown): unknown => (v instanceof PyTuple ? v.items : v);

const allWarnings = (s: Snapshot): string => {
  const sum = summarize(s);
  return [...sum.warnings, ...sum.devices.flatMap((d) => d.warnings)].join('\n');
};

const base = [
  e('segment_alloc', SEG, 2 * MiB),
  e('alloc', SEG, 100, { frames: f1 }),
  e('alloc', SEG + 512, 300),
  e('free_requested', SEG + 512, 300),
  e('free_completed', SEG + 512, 300),
];

describe('an action memlens does not know (e.g. user_defined from a vendor build)', () => {
  const value = snapshotWith([...base.slice(0, 3), e('user_defined', 0, 0), ...base.slice(3)]);
  for (const [how, load] of loads(value)) {
    it(`${how}: is counted, changes no total, and is reported`, () => {
      const s = load();
      const d = summarize(s).devices[0]!;
      expect(d.trace_actions).toEqual({
        alloc: 2,
        free_completed: 1,
        free_requested: 1,
        segment_alloc: 1,
        user_defined: 1,
      });
      expect([...s.devices[0]!.totals.allocated]).toEqual([0, 100, 400, 400, 100, 100]);
      expect(allWarnings(s)).toMatch(/1 trace entry has an action memlens does not know: user_defined/);
    });
  }
});

describe("the viewer's folded 'free' action (free_requested + free_completed in one entry)", () => {
  const value = snapshotWith([...base.slice(0, 3), e('free', SEG + 512, 300)]);
  for (const [how, load] of loads(value)) {
    it(`${how}: drops allocated and active at once and closes the allocation`, () => {
      const s = load();
      const d = s.devices[0]!;
      expect([...d.totals.allocated]).toEqual([0, 100, 400, 100]);
      expect([...d.totals.active]).toEqual([0, 100, 400, 100]);
      expect(d.totals.start.allocated).toBe(0);
      const a = d.allocations;
      const freed = a.ofEntry[3]!;
      expect(a.start[freed]).toBe(2);
      expect(a.freeRequested[freed]).toBe(3);
      expect(a.end[freed]).toBe(3);
      expect(a.facts.orphanFrees).toBe(0);
    });
  }
});

describe('trace entry keys memlens does not model', () => {
  // profile_plot's synthesized snapshots carry `category`; the newest viewer reads `forward_frames`.
  const value = snapshotWith([
    e('segment_alloc', SEG, 2 * MiB, { category: 'parameter' }),
    e('alloc', SEG, 100, { category: 'parameter', forward_frames: ['  File "m.py", line 3'] }),
  ]);
  for (const [how, load] of loads(value)) {
    it(`${how}: are kept on the entry and reported with how many entries carry them`, () => {
      const s = load();
      const cols = s.traceColumns;
      const d = s.devices[0]!;
      expect(cols.extras.get(d.trace.rowOf(1))).toEqual({
        category: 'parameter',
        forward_frames: ['  File "m.py", line 3'],
      });
      expect(allWarnings(s)).toMatch(
        /trace entry keys memlens does not read: category \(2 entries\), forward_frames \(1 entry\)/,
      );
    });
  }
});

describe('segment and block keys and values memlens does not model', () => {
  const value = snapshotWith(
    [e('alloc', SEG, 100)],
    { state: 'active_weird', tid: 7 },
    { segment_type: 'huge', owner: 'x' },
  );
  for (const [how, load] of loads(value)) {
    it(`${how}: reserved still counts the segment; the odd state, pool and keys are reported`, () => {
      const s = load();
      const d = summarize(s).devices[0]!;
      expect(d.reserved_bytes).toBe(2 * MiB);
      expect(d.allocated_bytes).toBe(0); // the block's state is not one memlens can count
      const w = allWarnings(s);
      expect(w).toMatch(/1 block \(512 B\) has a state memlens does not know \(active_weird\)/);
      expect(w).toMatch(/segment_type memlens does not know: huge/);
      expect(w).toMatch(/segment key 'owner'/);
      expect(w).toMatch(/block key 'tid'/);
    });
  }
});

describe('an oom entry (device_free instead of addr) and a snapshot marker', () => {
  const value = snapshotWith([
    ...base.slice(0, 2),
    { action: 'oom', device_free: 1234, size: 10 * MiB, stream: STREAM },
    e('snapshot', 0, 0),
  ]);
  for (const [how, load] of loads(value)) {
    it(`${how}: load with the free bytes kept and no memory change`, () => {
      const s = load();
      const d = s.devices[0]!;
      expect(d.trace.deviceFree?.[2]).toBe(1234);
      expect(Number.isNaN(d.trace.addr[2]!)).toBe(true);
      expect(s.traceColumns.streams[d.trace.stream[2]!]).toBe(STREAM);
      expect([...d.totals.allocated]).toEqual([0, 100, 100, 100]);
      expect(summarize(s).devices[0]!.ooms).toBe(1);
    });
  }
});

describe('PyTorch 2.0: no time_us, no frames on entries, blocks with history', () => {
  const value: Entry = {
    segments: [
      {
        device: 0,
        address: SEG,
        total_size: 2 * MiB,
        allocated_size: 512,
        active_size: 512,
        stream: 0,
        segment_type: 'small',
        blocks: [
          { size: 512, state: 'active_allocated', history: [{ addr: SEG, real_size: 100, frames: f1 }] },
          { size: 2 * MiB - 512, state: 'inactive' },
        ],
      },
    ],
    device_traces: [[e('segment_alloc', SEG, 2 * MiB), e('alloc', SEG, 100)]],
  };
  for (const [how, load] of loads(value)) {
    it(`${how}: takes the block address, requested size and stack from its place and history`, () => {
      const s = load();
      expect(s.tables.blocks.address[1]).toBe(SEG + 512);
      expect(s.tables.blocks.requestedSize[0]).toBe(100);
      expect(s.stacks.frames(s.tables.blocks.stack[0]!)[0]!.name).toBe('forward');
      expect(summarize(s).devices[0]!.trace_span_us).toBe(0);
      expect(allWarnings(s)).toMatch(/no allocator_settings/);
    });
  }
});

describe('frames as C++ stacks and fx augmentation write them', () => {
  const frames: Entry[] = [
    { filename: '', line: 0, name: 'c10::cuda::CUDACachingAllocator::malloc' },
    { filename: '??', line: 0, name: '' },
    { filename: 'model.py', line: 5, name: 'forward', fx_node_op: 'call_function', fx_node_name: 'mm' },
  ];
  const value = snapshotWith([e('alloc', SEG, 100, { frames })]);
  for (const [how, load] of loads(value)) {
    it(`${how}: keep empty names, line 0 and the fx keys`, () => {
      const s = load();
      const got = s.stacks.frames(s.devices[0]!.trace.stack[0]!);
      expect(got.map((f) => [f.filename, f.line, f.name])).toEqual(
        frames.map((f) => [f.filename, f.line, f.name]),
      );
      expect(got[2]!.extra).toEqual({ fx_node_op: 'call_function', fx_node_name: 'mm' });
    });
  }
});

describe('newest keys: pool_id, compile_context, user_metadata as a dict, host memory', () => {
  const value = snapshotWith(
    [
      e('alloc', SEG, 100, {
        pool_id: pyTuple([1, 2]),
        compile_context: 'Torch-Compiled Region: 0/0',
        user_metadata: { step: 3 },
        time_us: 1_700_000_000_000_000,
      }),
    ],
    {},
    { segment_pool_id: pyTuple([1, 2]), is_expandable: false },
    {
      host_segments: [],
      host_traces: [[e('alloc', 0x1000, 64)]],
      allocator_settings: { expandable_segments: false, trace_alloc_overflowed: false },
    },
  );
  for (const [how, load] of loads(value)) {
    it(`${how}: keep each value, leave host entries off the CUDA device and name them`, () => {
      const s = load();
      const d = s.devices[0]!;
      const cols = s.traceColumns;
      expect(d.trace.length).toBe(1);
      expect(cols.pools[d.trace.poolId![0]!]).toEqual([1, 2]);
      expect(cols.texts[d.trace.compileContext![0]!]).toBe('Torch-Compiled Region: 0/0');
      expect(cols.texts[d.trace.userMetadata![0]!]).toContain('step');
      expect(s.tables.segments[0]!.poolId).toEqual([1, 2]);
      expect(allWarnings(s)).toMatch(/top-level keys memlens does not read: host_segments, host_traces/);
    });
  }
});
