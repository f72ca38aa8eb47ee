import { describe, expect, it } from 'vitest';
import { parseCycleGraph, parseCycleText } from '../../../../src/engine/analyses/cycles/cycle-file.js';
import { layoutCycle } from '../../../../src/engine/analyses/cycles/cycle-layout.js';
import { linkTensor } from '../../../../src/engine/analyses/cycles/cycle-links.js';
import { cycleReport, gcCache } from '../../../../src/engine/analyses/cycles/cycle-report.js';
import { summarizeCycle } from '../../../../src/engine/analyses/cycles/cycle-summary.js';
import {
  candidateCells,
  noWindowReason,
  traceSpan,
} from '../../../../src/engine/analyses/cycles/cycle-windows.js';
import { formatDuration } from '../../../../src/engine/base/format.js';
import { discoverRun } from '../../../../src/engine/run-layout/discover.js';
import { awaitableCycle, cycleSnapshot, graphNodeChain } from '../../../helpers/cycle-files.js';

const MiB = 2 ** 20;

describe('cycle files: read and checked', () => {
  const file = awaitableCycle({ time_us: 1_700_000_000_000_000, step: 40 }, [
    { bytes: 2 * MiB, data_ptr: 0x7f0000000000 },
  ]);
  it('reads the contract', () => {
    const g = parseCycleText(JSON.stringify(file));
    expect(g).toMatchObject({ rank: 0, pid: 4242, collection: 1, generation: 2, step: 40, truncated: false });
    expect(g.nodes).toHaveLength(5);
    expect(g.nodes[4]!.tensor).toMatchObject({ bytes: 2 * MiB, data_ptr: 0x7f0000000000, device: 'cuda:0' });
    expect(g.edges[3]).toEqual({ from: 3, to: 0, label: '__self__', kind: 'self' });
  });
  it('names what is wrong in one line', () => {
    /** The file with the value at `path` replaced (removed when undefined). */
    const broken = (path: (string | number)[], value: unknown) => {
      const f = structuredClone(file);
      let at = f as Record<string | number, unknown>;
      for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
      if (value === undefined) delete at[path.at(-1)!];
      else at[path.at(-1)!] = value;
      return () => parseCycleGraph(f);
    };
    expect(() => parseCycleText('{"memlens_cycles": 1, "rank"')).toThrow(
      /^not a memlens cycle file: invalid JSON/,
    );
    expect(() => parseCycleGraph([1])).toThrow('the top level is a list, expected an object');
    expect(() => parseCycleGraph({ segments: [] })).toThrow("no 'memlens_cycles' key (keys: 'segments')");
    expect(broken(['memlens_cycles'], 2)).toThrow('schema 2; this memlens reads schema 1');
    expect(broken(['rank'], '0')).toThrow('rank is "0", expected a non-negative integer');
    expect(broken(['time_us'], undefined)).toThrow('time_us is missing, expected a non-negative integer');
    expect(broken(['nodes', 4, 'tensor', 'bytes'], -1)).toThrow('nodes[4].tensor.bytes is -1');
    expect(broken(['edges', 1, 'to'], 99)).toThrow("edges[1].to is 99, which is no node's id");
    expect(broken(['edges', 0, 'kind'], 'weak')).toThrow(
      "edges[0].kind is 'weak', expected one of attribute",
    );
    expect(broken(['nodes', 5], (file.nodes as unknown[])[0])).toThrow(
      'nodes[5].id 0 is used by an earlier node',
    );
    expect(broken(['nodes'], null)).toThrow("'nodes' is null, expected a list");
  });
});

describe('cycle paths and bytes held', () => {
  it('reads from the user class on the cycle to the tensor, by its labelled references', () => {
    const g = parseCycleGraph(
      awaitableCycle({ time_us: 1 }, [
        { bytes: 512 * MiB, data_ptr: 0x1000 },
        { bytes: 4 * MiB, data_ptr: 0x1000 }, // a view of the same storage: counted once
        { bytes: 3 * MiB, data_ptr: 0x9000_0000 },
      ]),
    );
    const s = summarizeCycle(g);
    expect(s.bytes).toBe(515 * MiB);
    expect(s.tensors.map((t) => t.counted)).toEqual([true, false, true]);
    expect(s.path_words).toBe('AwaitableTensor.value → Tensor 512 MiB');
    expect(s.tensors[2]!.path_words).toBe('AwaitableTensor.extra2 → Tensor 3.00 MiB');
    expect(s.tensors[0]!.path.from_cycle).toBe(true);
  });
  it('cuts a long path in the middle', () => {
    const g = parseCycleGraph(graphNodeChain({ time_us: 1 }, 8, { bytes: MiB, data_ptr: 0x2000 }));
    const [t] = summarizeCycle(g).tensors;
    expect(t!.path.hops).toHaveLength(10);
    expect(t!.path_words).toBe(
      'GraphNode.next_fn → GraphNode.next_fn → GraphNode.next_fn → GraphNode.next_fn → … → GraphNode.saved_tensors → tuple[0] → Tensor 1.00 MiB',
    );
    const short = summarizeCycle(
      parseCycleGraph(graphNodeChain({ time_us: 1 }, 1, { bytes: MiB, data_ptr: 1 })),
    );
    expect(short.path_words).toBe('GraphNode.next_fn → GraphNode.saved_tensors → tuple[0] → Tensor 1.00 MiB');
  });
});

describe('cycle tensors linked to the snapshot of their window', () => {
  const { generated, s } = cycleSnapshot();
  const d = s.devices[0]!;
  const a = d.allocations;
  const planted = generated.expected.planted![0]!.bursts;
  const gcOf = gcCache(s);
  // A collection found the garbage just before the burst that released it.
  const burst = planted[1]!;
  const freed = a.ofEntry[burst.entry]!;
  const ptr = a.addr[freed]! + 512;
  const tensor = {
    shape: [1],
    dtype: 'float32',
    bytes: a.size[freed]!,
    data_ptr: ptr,
    device: 'cuda:0',
    stack: null,
  };

  it('finds the allocation live at the collection and the GC burst that freed it', () => {
    const link = linkTensor(s, 7, tensor, burst.timeUs - 1, gcOf);
    expect(link.allocation).toMatchObject({
      device: 0,
      id: freed,
      address: a.addr[freed],
      free_entry: burst.entry,
    });
    expect(link.allocation!.site).toMatchObject({ name: 'forward', line: 176 });
    expect(link.burst).toMatchObject({
      index: 1,
      entry: burst.entry,
      time_us: burst.timeUs,
      count: burst.count,
    });
    expect(link.allocation_reason).toBeNull();
    expect(link.burst_reason).toBeNull();
  });

  it('says why a tensor cannot be linked', () => {
    const span = traceSpan(s)!;
    const reason = (t: typeof tensor, time: number) => linkTensor(s, 7, t, time, gcOf).allocation_reason;
    expect(reason({ ...tensor, device: 'cpu' }, burst.timeUs)).toBe(
      'a cpu tensor: memory snapshots record CUDA memory only',
    );
    expect(reason({ ...tensor, device: 'cuda:3' }, burst.timeUs)).toBe(
      'the snapshot has no device 3 (devices: 0)',
    );
    expect(reason({ ...tensor, data_ptr: 12345 }, burst.timeUs)).toBe(
      'address 0x3039 is in no allocation of the trace or the dump',
    );
    expect(reason(tensor, span.first_us - 60e6)).toBe(
      'the cycle’s time is outside the trace (1.0 min before its start; the trace lasts ' +
        `${formatDuration(span.last_us - span.first_us)})`,
    );
  });

  it('reports a cycle with its window, or why none', () => {
    const file = parseCycleGraph(awaitableCycle({ time_us: burst.timeUs - 1, step: 4 }, [tensor]));
    const r = cycleReport(file, { file: 'step4.pickle', by: 'time', snapshot: s });
    expect(r.bytes).toBe(tensor.bytes);
    expect(r.tensors[0]).toMatchObject({ allocation: { id: freed }, burst: { index: 1 } });
    const none = cycleReport(file, { file: null, reason: 'no snapshot of rank 0 (ranks: 1)' });
    expect(none.snapshot).toBeNull();
    expect(none.tensors[0]).toMatchObject({
      allocation: null,
      allocation_reason: 'no snapshot of rank 0 (ranks: 1)',
    });
  });
});

describe('which window of a run holds a cycle', () => {
  const run = discoverRun([
    'r/step1/torch_memory_rank0_pid7.pickle',
    'r/step2/torch_memory_rank0_pid7.pickle',
    'r/step3/torch_memory_rank0_pid7.pickle',
    'r/step2/torch_memory_rank1_pid8.pickle',
  ]);
  it("tries the rank's window naming the step first, then the nearest", () => {
    expect(candidateCells(run, { rank: 0, pid: 7, step: 3 }).map((c) => c.path)).toEqual([
      'r/step3/torch_memory_rank0_pid7.pickle',
      'r/step2/torch_memory_rank0_pid7.pickle',
      'r/step1/torch_memory_rank0_pid7.pickle',
    ]);
    expect(candidateCells(run, { rank: 1, pid: 99, step: 2 })).toEqual([]);
    expect(noWindowReason(run, { rank: 2, step: 1 })).toBe('no snapshot of rank 2 (ranks: 0, 1)');
    expect(noWindowReason(run, { rank: 0, step: 9 })).toBe(
      'no snapshot of rank 0 spans the cycle’s time or names step 9',
    );
  });
});

describe('cycle graph layout', () => {
  it('lays the path to the largest tensor left to right, boxes apart, every edge drawn', () => {
    const g = parseCycleGraph(
      awaitableCycle({ time_us: 1 }, [
        { bytes: 512 * MiB, data_ptr: 0x1000 },
        { bytes: 3 * MiB, data_ptr: 0x9000_0000 },
      ]),
    );
    const l = layoutCycle(g);
    const at = new Map(l.nodes.map((n) => [n.id, n]));
    const path = summarizeCycle(g).tensors[0]!.path.hops.map((h) => h.node);
    const xs = [...path, 4].map((id) => at.get(id)!.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(xs.length);
    expect(at.get(4)).toMatchObject({ size: '512 MiB', text: 'Tensor float32[134217728]' });
    for (const a of l.nodes)
      for (const b of l.nodes)
        if (a !== b) {
          const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
          expect(apart, `${a.id} overlaps ${b.id}`).toBe(true);
        }
    for (const n of l.nodes) expect(n.x + n.w <= l.width && n.y + n.h <= l.height).toBe(true);
    expect(l.edges).toHaveLength(g.edges.length);
    // The reference that closes the cycle (method.__self__ → AwaitableTensor) loops back under the boxes.
    const back = l.edges.find((e) => e.label === '__self__')!;
    expect(back.on_cycle).toBe(true);
    expect(back.ly).toBeGreaterThan(Math.max(...l.nodes.map((n) => n.y + n.h)));
  });
});

describe('a large cycle graph is drawn as the paths to its largest tensors', () => {
  it('keeps the paths of the largest tensors within the node budget and says how many it left out', () => {
    const sizes = Array.from({ length: 20 }, (_, i) => (i + 1) * MiB);
    const g = parseCycleGraph(
      awaitableCycle(
        { time_us: 1 },
        sizes.map((bytes, i) => ({ bytes, data_ptr: 0x1000 * (i + 1) })),
      ),
    );
    const l = layoutCycle(g, 10);
    // AwaitableTensor, then one tensor per path: the 9 largest.
    const drawn = l.nodes.filter((n) => n.size !== null).map((n) => g.nodes[n.id]!.tensor!.bytes);
    expect(drawn.sort((a, b) => b - a)).toEqual(sizes.slice(-9).reverse());
    expect(l.nodes).toHaveLength(10);
    expect(l.hidden).toBe(g.nodes.length - 10);
    expect(layoutCycle(g).hidden).toBe(0);
  });
  it('draws the largest tensor’s path whole even when it alone passes the budget', () => {
    const g = parseCycleGraph(graphNodeChain({ time_us: 1 }, 30, { bytes: 8 * MiB, data_ptr: 0x1000 }));
    const l = layoutCycle(g, 12);
    expect(l.nodes.map((n) => n.id).sort((a, b) => a - b)).toEqual(
      g.nodes.filter((n) => n.type !== 'Context').map((n) => n.id),
    );
    expect(l.hidden).toBe(1);
  });
});
