/**
 * `memlens record --cycles`'s Python observer (python/memlens/cycles.py) against real gc and real
 * torch (Debian's CPU build under /usr/bin/python3), with --cycles-device cpu: the scenarios in
 * test/python/cycles/scenarios.py make garbage of each shape, and here the graphs they wrote are
 * checked (edge labels and kinds along the path to each tensor, bytes, the cycle) together with
 * what the program itself saw (objects freed, __del__ and weakref callbacks run once, its own
 * gc.garbage and debug flags untouched).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CycleEdge,
  type CycleGraph,
  type CycleNode,
  parseCycleText,
} from '../../../src/engine/analyses/cycles/cycle-file.js';

const PYTHON = '/usr/bin/python3';

interface Facts {
  logs: string[];
  profile_hook_left: boolean;
  left_for_next_collection: number;
  [fact: string]: unknown;
}

let out: string;
let facts: Record<string, Facts>;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'memlens-cycles-'));
  const run = spawnSync(PYTHON, ['test/python/cycles/scenarios.py', out], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`scenarios.py failed (${run.status}):\n${run.stderr}`);
  facts = JSON.parse(run.stdout) as Record<string, Facts>;
}, 120_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The graphs a scenario wrote, in collection order, read by memlens's own reader. */
function graphs(scenario: string): CycleGraph[] {
  const dir = join(out, scenario, 'cycles');
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir);
  expect(names.filter((n) => !/^rank0_pid\d+_gc\d+\.json$/.test(n))).toEqual([]);
  const collection = (n: string) => Number(/_gc(\d+)\.json$/.exec(n)?.[1]);
  return names
    .sort((a, b) => collection(a) - collection(b))
    .map((n) => parseCycleText(readFileSync(join(dir, n), 'utf8')));
}

function only(scenario: string): CycleGraph {
  const written = graphs(scenario);
  expect(written).toHaveLength(1);
  return written[0] as CycleGraph;
}

function nodesOf(g: CycleGraph, type: string): CycleNode[] {
  return g.nodes.filter((n) => n.type === type);
}

function one(g: CycleGraph, type: string): CycleNode {
  const found = nodesOf(g, type);
  expect(found, type).toHaveLength(1);
  return found[0] as CycleNode;
}

/** The shortest chain of references from one node to another, as "Type -label(kind)-> Type". */
function path(g: CycleGraph, from: CycleNode, to: CycleNode): string {
  const via = new Map<number, CycleEdge>();
  const queue = [from.id];
  for (const at of queue) {
    if (at === to.id) break;
    for (const e of g.edges) {
      if (e.from === at && !via.has(e.to) && e.to !== from.id) {
        via.set(e.to, e);
        queue.push(e.to);
      }
    }
  }
  const hops: string[] = [];
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  for (let at = to.id; at !== from.id; ) {
    const e = via.get(at);
    if (e === undefined) return `no path from ${from.label} to ${to.label}`;
    hops.unshift(`-${e.label}(${e.kind})-> ${byId.get(e.to)?.type}`);
    at = e.from;
  }
  return [from.type, ...hops].join(' ');
}

function cycleTypes(g: CycleGraph): string[] {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  return g.cycle.map((id) => byId.get(id)?.type ?? '?').sort();
}

function quiet(scenario: string): Facts {
  const f = facts[scenario] as Facts;
  expect(f.logs).toEqual([]);
  expect(f.profile_hook_left).toBe(false);
  expect(f.left_for_next_collection).toBe(0);
  return f;
}

describe('graphs of the garbage that holds tensors', () => {
  it('plain objects: two nodes linked both ways, each holding a tensor', () => {
    const f = quiet('plain');
    expect(f.weakref_dead).toBe(true);
    const g = only('plain');
    expect(g.device).toBe('cpu');
    expect(g.truncated).toBe(false);
    const tensors = nodesOf(g, 'Tensor');
    expect(tensors.map((t) => t.tensor?.bytes).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([1024, 2048]);
    expect(tensors.map((t) => t.label).sort()).toEqual(['Tensor float32[256]', 'Tensor float32[512]']);
    expect(cycleTypes(g)).toEqual(['Node', 'Node']);
    const [a, b] = nodesOf(g, 'Node') as [CycleNode, CycleNode];
    expect(path(g, a, b)).toBe('Node -link(attribute)-> Node');
    expect(path(g, b, a)).toBe('Node -link(attribute)-> Node');
    for (const t of tensors) {
      expect(t.tensor?.device).toBe('cpu');
      expect(t.tensor?.data_ptr).toBeGreaterThan(0);
      expect(t.tensor?.stack).toBeNull();
    }
    const sum = tensors.reduce((s, t) => s + (t.tensor?.bytes ?? 0), 0);
    expect(readRaw('plain').tensor_bytes).toBe(sum);
  });

  it('a closure: dict -> function -> cell -> dict, the tensor under a key', () => {
    quiet('closure');
    const g = only('closure');
    const tensor = one(g, 'Tensor');
    expect(tensor.label).toBe('Tensor float64[100]');
    expect(tensor.tensor?.bytes).toBe(800);
    const fn = one(g, 'function');
    expect(fn.label).toBe('function on_done');
    expect(path(g, fn, tensor)).toBe(
      "function -__closure__[0](closure)-> cell -cell_contents(closure)-> dict -['tensor'](key)-> Tensor",
    );
    expect(path(g, one(g, 'dict'), fn)).toBe("dict -['callback'](key)-> function");
    expect(cycleTypes(g)).toEqual(['cell', 'dict', 'function']);
  });

  it('a bound method stored on its own object', () => {
    quiet('bound_method');
    const g = only('bound_method');
    const method = one(g, 'method');
    expect(method.label).toBe('method Holder.done');
    expect(path(g, method, one(g, 'Tensor'))).toBe(
      'method -__self__(self)-> Holder -tensor(attribute)-> Tensor',
    );
    expect(path(g, one(g, 'Holder'), method)).toBe('Holder -callback(attribute)-> method');
    expect(one(g, 'Tensor').tensor?.bytes).toBe(128);
    expect(one(g, 'Tensor').label).toBe('Tensor int16[64]');
    expect(cycleTypes(g)).toEqual(['Holder', 'method']);
  });

  it("seed 001's awaitable tensor with a view callback (a lambda holding self)", () => {
    quiet('awaitable_closure');
    const g = only('awaitable_closure');
    const tensors = nodesOf(g, 'Tensor');
    expect(tensors).toHaveLength(3);
    for (const t of tensors) {
      expect(t.label).toBe('Tensor float32[1, 512, 1024]');
      expect(t.tensor?.bytes).toBe(2 * 1024 * 1024);
    }
    expect(readRaw('awaitable_closure').tensor_bytes).toBe(3 * 2 * 1024 * 1024);
    const holders = nodesOf(g, 'AwaitableTensorWithViewCallback');
    for (const fn of nodesOf(g, 'function')) {
      expect(fn.label).toBe('function <lambda>');
      // Each lambda's closure holds its own owner, and only that one.
      const reached = holders.map((h) => path(g, fn, h)).filter((p) => !p.startsWith('no path'));
      expect(reached).toEqual([
        'function -__closure__[0](closure)-> cell -cell_contents(closure)-> AwaitableTensorWithViewCallback',
      ]);
    }
    for (const holder of holders) {
      const own = tensors.map((t) => path(g, holder, t)).filter((p) => !p.startsWith('no path'));
      expect(own).toEqual([
        'AwaitableTensorWithViewCallback -_tensor_awaitable(attribute)-> AwaitableTensor -_tensor(attribute)-> Tensor',
      ]);
      expect(path(g, holder, nodesOf(g, 'function')[0] as CycleNode)).toMatch(
        /^(no path|\S+ -_callback\(attribute\)-> function)/,
      );
    }
    expect(cycleTypes(g)).toEqual([
      ...Array(3).fill('AwaitableTensorWithViewCallback'),
      ...Array(3).fill('cell'),
      ...Array(3).fill('function'),
    ]);
  });

  it("seed 001's callback as a bound method", () => {
    quiet('awaitable_method');
    const g = only('awaitable_method');
    const method = one(g, 'method');
    expect(method.label).toBe('method AwaitableTensorWithMethodCallback.view');
    expect(path(g, method, one(g, 'Tensor'))).toBe(
      'method -__self__(self)-> AwaitableTensorWithMethodCallback -_tensor_awaitable(attribute)-> AwaitableTensor -_tensor(attribute)-> Tensor',
    );
    expect(one(g, 'Tensor').tensor?.bytes).toBe(2 * 1024 * 1024);
    expect(cycleTypes(g)).toEqual(['AwaitableTensorWithMethodCallback', 'method']);
  });

  it("seed 003's graph nodes: output -> op -> output, inputs and data hanging off them", () => {
    const f = quiet('graph_nodes');
    expect(f.weight_alive).toBe(true);
    const g = only('graph_nodes');
    expect(g.step).toBe(41);
    const tensors = nodesOf(g, 'Tensor');
    // x, x @ w and relu(x @ w) for each of the two batches; the model's weight is alive, not here.
    expect(tensors.map((t) => t.label)).toEqual(Array(6).fill('Tensor float32[8, 32]'));
    expect(readRaw('graph_nodes').tensor_bytes).toBe(6 * 8 * 32 * 4);
    expect(cycleTypes(g)).toEqual(['MatMul', 'MatMul', 'Relu', 'Relu', ...Array(4).fill('Value')]);
    for (const op of [...nodesOf(g, 'MatMul'), ...nodesOf(g, 'Relu')]) {
      const out = g.edges.find((e) => e.from === op.id && e.label === 'output');
      expect(out?.kind).toBe('attribute');
      const back = g.edges.find((e) => e.from === out?.to && e.to === op.id);
      expect(back?.label).toBe('op');
    }
    // The batch's leaf values are not on a cycle: a list of inputs keeps them.
    const leaves = nodesOf(g, 'Value').filter((v) => !g.cycle.includes(v.id));
    expect(leaves).toHaveLength(2);
    for (const leaf of leaves) {
      const holder = g.edges.find((e) => e.to === leaf.id);
      expect(holder).toMatchObject({ label: '[0]', kind: 'index' });
    }
  });

  it('an exception kept in a local: error -> traceback -> frame -> error, the tensor a local', () => {
    quiet('frame_local');
    const g = only('frame_local');
    const frame = one(g, 'frame');
    expect(frame.label).toMatch(/^frame step \(scenarios\.py:\d+\)$/);
    expect(path(g, frame, one(g, 'Tensor'))).toBe('frame -activations(local)-> Tensor');
    expect(path(g, one(g, 'ValueError'), frame)).toBe(
      'ValueError -__traceback__(other)-> traceback -tb_frame(other)-> frame',
    );
    expect(path(g, frame, one(g, 'ValueError'))).toBe('frame -kept(local)-> ValueError');
    expect(cycleTypes(g)).toEqual(['ValueError', 'frame', 'traceback']);
  });

  it('views of one storage: bytes per view, counted once in the total', () => {
    quiet('views');
    const g = only('views');
    const tensors = nodesOf(g, 'Tensor');
    expect(tensors.map((t) => [t.label, t.tensor?.bytes]).sort()).toEqual([
      ['Tensor float32[1000]', 4000],
      ['Tensor float32[250]', 1000],
    ]);
    expect(tensors[0]?.tensor?.data_ptr).toBe(tensors[1]?.tensor?.data_ptr);
    expect(readRaw('views').tensor_bytes).toBe(4000);
  });

  it("an instance's own dict is folded into it; one that something else holds is a node", () => {
    quiet('materialized_dict');
    const g = only('materialized_dict');
    const dict = one(g, 'dict');
    const holdsDict = (n: CycleNode) => g.edges.some((e) => e.from === n.id && e.to === dict.id);
    const shared = nodesOf(g, 'Node').find(holdsDict) as CycleNode;
    const pair = nodesOf(g, 'Node').filter((n) => !holdsDict(n)) as [CycleNode, CycleNode];
    expect(pair).toHaveLength(2);
    expect(path(g, pair[0], pair[1])).toBe('Node -link(attribute)-> Node');
    expect(path(g, pair[1], pair[0])).toBe('Node -link(attribute)-> Node');
    for (const node of pair) {
      const own = nodesOf(g, 'Tensor').filter((t) =>
        g.edges.some((e) => e.from === node.id && e.to === t.id),
      );
      expect(own.map((t) => path(g, node, t))).toEqual(['Node -tensor(attribute)-> Tensor']);
    }
    expect(path(g, shared, dict)).toBe('Node -__dict__(attribute)-> dict');
    expect(g.edges).toContainEqual({ from: dict.id, to: dict.id, label: "['alias']", kind: 'key' });
    const small = nodesOf(g, 'Tensor').find((t) => t.label === 'Tensor float32[8]') as CycleNode;
    expect(path(g, shared, small)).toBe("Node -__dict__(attribute)-> dict -['tensor'](key)-> Tensor");
    expect(g.edges).toContainEqual({ from: dict.id, to: shared.id, label: "['me']", kind: 'key' });
    expect(cycleTypes(g)).toEqual(['Node', 'Node', 'Node', 'dict']);
  });

  it('garbage without a tensor on the device writes nothing', () => {
    quiet('no_tensor');
    expect(existsSync(join(out, 'no_tensor'))).toBe(false);
    quiet('other_device'); // CPU tensors, observing cuda
    expect(existsSync(join(out, 'other_device'))).toBe(false);
  });

  it("never runs the program's code (__torch_function__, __getattribute__) while describing", () => {
    const f = quiet('no_program_code');
    expect(f.program_code_calls).toEqual([]);
    const g = only('no_program_code');
    const touchy = one(g, 'Touchy');
    expect(one(g, 'Guarded').label).toBe('Guarded float32[12]');
    expect(path(g, touchy, one(g, 'Guarded'))).toBe('Touchy -tensor(attribute)-> Guarded');
    expect(g.edges).toContainEqual({ from: touchy.id, to: touchy.id, label: 'me', kind: 'attribute' });
    expect(g.cycle).toEqual([touchy.id]); // a self-reference is a cycle
  });
});

describe('bounds', () => {
  it('max graphs: two files, then said once and no more observing', () => {
    const f = facts.max_graphs as Facts;
    expect(graphs('max_graphs').map((g) => g.collection)).toEqual([1, 2]);
    expect(f.logs).toEqual(['cycles: wrote 2 graphs (the limit); later collections are not observed']);
    expect(f.left_for_next_collection).toBe(0);
  });

  it('max nodes: the largest tensor, its holders and their cycle come first', () => {
    quiet('max_nodes');
    const g = only('max_nodes');
    expect(g.truncated).toBe(true);
    expect(g.nodes).toHaveLength(10);
    const first = g.nodes[0] as CycleNode;
    expect(first.label).toBe('Tensor float32[41]');
    const holder = g.edges.find((e) => e.to === first.id);
    expect(holder).toMatchObject({ label: 'tensor', kind: 'attribute' });
    const partner = g.edges.find((e) => e.from === holder?.from && e.label === 'link');
    expect(g.cycle).toContain(holder?.from);
    expect(g.cycle).toContain(partner?.to);
    expect(g.edges).toContainEqual({
      from: partner?.to,
      to: holder?.from,
      label: 'link',
      kind: 'attribute',
    });
    const sum = g.nodes.reduce((s, n) => s + (n.tensor?.bytes ?? 0), 0);
    expect(readRaw('max_nodes').tensor_bytes).toBe(sum);
  });

  it('max nodes: a cycle longer than the bound keeps the tensor and the chain above it', () => {
    quiet('max_nodes_ring');
    const g = only('max_nodes_ring');
    expect(g.truncated).toBe(true);
    expect(g.nodes).toHaveLength(10);
    expect(g.nodes[0]?.label).toBe('Tensor float32[1000]');
    expect(g.cycle).toEqual([]); // not closed within 10 nodes
    const chain = path(g, g.nodes[1] as CycleNode, g.nodes[0] as CycleNode);
    expect(chain).toBe('Node -tensor(attribute)-> Tensor');
  });
});

describe("the program's behaviour is unchanged", () => {
  it('the cycle is freed at once, __del__ and the weakref callback run once, gc state kept', () => {
    const f = quiet('behaviour');
    expect(f).toMatchObject({
      found: 2,
      weakref_dead: true,
      weakref_callbacks: 1,
      del_calls: 1,
      payload_refs_extra: 0,
      flags_restored: true,
      garbage_kept: true,
    });
    expect(graphs('behaviour')).toHaveLength(1);
  });

  it("the collector's own collections: garbage freed as it comes, generation 0 observed", () => {
    const f = facts.automatic as Facts;
    expect(f.profile_hook_left).toBe(false);
    expect(f.unfreed_after).toBe(0);
    // Collections every ~100 allocations (each pair is ~6): about 20 pairs wait at most, as
    // without the observer; left to the next generation-1 collection it would be ~10 times that.
    expect(f.most_unfreed).toBeLessThan(40);
    const written = graphs('automatic');
    expect(written.length).toBeGreaterThan(0);
    expect(written.some((g) => g.generation === 0)).toBe(true);
  });

  it("the program's own gc callbacks before and after the observer's run as usual", () => {
    const f = facts.other_callbacks as Facts;
    expect(f.profile_hook_left).toBe(false);
    expect(f.unfreed_after).toBe(0);
    expect(f.callback_calls).toBeGreaterThan(2 * 10); // both, at 'start' and 'stop' of each
    expect(f.logs).toEqual(['cycles: wrote 5 graphs (the limit); later collections are not observed']);
    expect(graphs('other_callbacks')).toHaveLength(5);
  });

  it('a collection in another thread: graph written, garbage freed when the main thread runs', () => {
    const f = quiet('worker_thread');
    expect(f).toMatchObject({ found: [4], payload_refs_extra: 0 });
    expect(nodesOf(only('worker_thread'), 'Node')).toHaveLength(2);
  });

  it('a program that set DEBUG_SAVEALL itself keeps its gc.garbage', () => {
    const f = facts.program_saveall as Facts;
    expect(f).toMatchObject({ garbage_len: 4, flags: true, profile_hook_left: false, logs: [] });
    expect(graphs('program_saveall')).toHaveLength(1);
  });

  it("a program's own profile function stays set and sees its calls; the cycle is observed", () => {
    const f = quiet('program_profiler');
    expect(f).toMatchObject({ still_set: true, profiler_saw_calls: true, payload_refs_extra: 0 });
    expect(graphs('program_profiler')).toHaveLength(1);
  });

  it('a failure is said once, turns the observer off, and the garbage is still freed', () => {
    const f = facts.failure as Facts;
    expect(f.logs).toHaveLength(1);
    expect(f.logs[0]).toMatch(
      /^cycles: could not write a cycle graph \(NotADirectoryError: .*failure_blocker\/cycles'\); cycle graphs are off for this process$/,
    );
    expect(f.payload_refs_extra).toBe(0);
    expect(f.profile_hook_left).toBe(false);
    expect(f.left_for_next_collection).toBe(0);
  });
});

describe('every file', () => {
  it('is read by memlens, with short labels and no temporary file left', () => {
    const scenarios = readdirSync(out).filter((n) => existsSync(join(out, n, 'cycles')));
    expect(scenarios.length).toBeGreaterThan(10);
    for (const s of scenarios) {
      for (const g of graphs(s)) {
        expect(g.pid).toBeGreaterThan(0);
        expect(g.time_us).toBeGreaterThan(Date.parse('2025-01-01') * 1000);
        for (const n of g.nodes) expect(n.label.length).toBeLessThanOrEqual(80);
        for (const e of g.edges) expect(e.label.length).toBeLessThanOrEqual(80);
      }
    }
  });
});

describe('allocation stacks of CUDA tensors (torch.cuda.memory._snapshot replaced by a stand-in)', () => {
  it('finds the active block holding each data_ptr, in 2.1 and 2.0 snapshot shapes', () => {
    const run = spawnSync(PYTHON, ['test/python/cycles/stacks.py'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const found = JSON.parse(run.stdout) as Record<string, unknown[]>;
    const forward = [
      { filename: 'train.py', line: 41, name: 'forward' },
      { filename: 'train.py', line: 90, name: 'main' },
    ];
    const main = [{ filename: 'train.py', line: 90, name: 'main' }];
    // block start, inside, an inactive block, the last byte of a block, past the segment
    expect(found.v21).toEqual([forward, forward, null, main, null]);
    expect(found.v20).toEqual([forward]); // the block's latest history entry
    expect(found.no_history).toEqual([null]);
    expect(found.snapshot_fails).toEqual([null]);
  });
});

/** The file's fields the reader does not return (tensor_bytes). */
function readRaw(scenario: string): { tensor_bytes: number } {
  const dir = join(out, scenario, 'cycles');
  const [name] = readdirSync(dir);
  return JSON.parse(readFileSync(join(dir, name as string), 'utf8')) as { tensor_bytes: number };
}
