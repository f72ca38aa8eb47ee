import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { sliceBytes } from '../../scripts/synth/run.js';
import { findIterations } from '../../src/engine/derived/iterations/iterations.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';

/**
 * Cycle files as `memlens record --cycles` writes them (docs/cycles-format.md, schema 1), built
 * from the shapes the seeds describe, for tests that need cycles before (or without) real torch:
 * seed 001's awaitable tensor whose callback's bound method points back at it, and a chain of
 * graph nodes (seed 003) long enough to cut its path in the middle.
 */
export interface FixtureTensor {
  bytes: number;
  data_ptr: number;
  device?: string;
  dtype?: string;
  shape?: number[];
}

export interface FixtureCycle {
  rank?: number;
  pid?: number;
  collection?: number;
  time_us: number;
  step?: number | null;
  device?: string;
}

type Node = { id: number; type: string; label: string; tensor?: unknown };
type Edge = { from: number; to: number; label: string; kind: string };

class Graph {
  nodes: Node[] = [];
  edges: Edge[] = [];
  cycle: number[] = [];
  add(type: string, label = type): number {
    this.nodes.push({ id: this.nodes.length, type, label });
    return this.nodes.length - 1;
  }
  tensor(t: FixtureTensor): number {
    const shape = t.shape ?? [t.bytes / 4];
    const dtype = t.dtype ?? 'float32';
    const id = this.add('Tensor', `Tensor ${dtype}[${shape.join(', ')}]`);
    this.nodes[id]!.tensor = {
      shape,
      dtype,
      bytes: t.bytes,
      data_ptr: t.data_ptr,
      device: t.device ?? 'cuda:0',
      stack: null,
    };
    return id;
  }
  link(from: number, to: number, label: string, kind: string): void {
    this.edges.push({ from, to, label, kind });
  }
  file(c: FixtureCycle): Record<string, unknown> {
    const held = new Map<number, number>();
    for (const n of this.nodes) {
      const t = n.tensor as { data_ptr: number; bytes: number } | undefined;
      if (t) held.set(t.data_ptr, Math.max(held.get(t.data_ptr) ?? 0, t.bytes));
    }
    return {
      memlens_cycles: 1,
      rank: c.rank ?? 0,
      pid: c.pid ?? 4242,
      hostname: 'fixture-host',
      collection: c.collection ?? 1,
      generation: 2,
      time_us: c.time_us,
      step: c.step ?? null,
      device: c.device ?? 'cuda',
      truncated: false,
      nodes: this.nodes,
      edges: this.edges,
      cycle: this.cycle,
      tensor_bytes: [...held.values()].reduce((a, b) => a + b, 0),
    };
  }
}

/**
 * Seed 001: an AwaitableTensor's `value` is the tensor; its `callbacks` list holds a Callback
 * whose `fn` is a bound method of the AwaitableTensor: the cycle AwaitableTensor → list →
 * Callback → method → AwaitableTensor keeps the tensors. Instances' __dict__ are folded into
 * their owners, as the observer writes them (docs/cycles-format.md).
 */
export function awaitableCycle(c: FixtureCycle, tensors: FixtureTensor[]): Record<string, unknown> {
  const g = new Graph();
  const awaitable = g.add('AwaitableTensor');
  const callbacks = g.add('list', 'list (1 item)');
  const callback = g.add('Callback');
  const method = g.add('method', 'method AwaitableTensor.on_done');
  g.link(awaitable, callbacks, 'callbacks', 'attribute');
  g.link(callbacks, callback, '[0]', 'index');
  g.link(callback, method, 'fn', 'attribute');
  g.link(method, awaitable, '__self__', 'self');
  g.cycle = [awaitable, callbacks, callback, method];
  tensors.forEach((t, i) => {
    const id = g.tensor(t);
    g.link(awaitable, id, i === 0 ? 'value' : `extra${i}`, 'attribute');
  });
  return g.file(c);
}

/**
 * Seed 003: a graph node and its context refer to each other (the cycle), and the node's
 * `next_fn` chain of `depth` graph nodes, kept alive only by it, ends in a node whose saved
 * tensors hold the tensor: a path from the cycle `depth + 3` hops long.
 */
export function graphNodeChain(c: FixtureCycle, depth: number, t: FixtureTensor): Record<string, unknown> {
  const g = new Graph();
  const head = g.add('GraphNode', 'GraphNode #0');
  const ctx = g.add('Context');
  g.link(head, ctx, 'ctx', 'attribute');
  g.link(ctx, head, 'node', 'attribute');
  g.cycle = [head, ctx];
  let at = head;
  for (let i = 1; i <= depth; i++) {
    const next = g.add('GraphNode', `GraphNode #${i}`);
    g.link(at, next, 'next_fn', 'attribute');
    at = next;
  }
  const saved = g.add('tuple', 'tuple (1 item)');
  g.link(at, saved, 'saved_tensors', 'attribute');
  g.link(saved, g.tensor(t), '[0]', 'index');
  return g.file(c);
}

/** Writes cycle files as the observer names them: `<dir>/cycles/rank<R>_pid<P>_gc<N>.json`. */
export function writeCycleFiles(dir: string, files: Record<string, unknown>[]): string[] {
  const at = join(dir, 'cycles');
  mkdirSync(at, { recursive: true });
  return files.map((f) => {
    const p = join(at, `rank${f.rank}_pid${f.pid}_gc${f.collection}.json`);
    writeFileSync(p, `${JSON.stringify(f)}\n`);
    return p;
  });
}

export interface CycleRun {
  /** The two window snapshots (steps 0-9 and 10-…), absolute paths. */
  windows: string[];
  /** Cycle files written, each with the window its collection falls in and what it must link to. */
  cycles: {
    path: string;
    window: number;
    allocation: number;
    /** Whether the tensor was allocated inside its window (else before it: the window has no stack for it). */
    allocatedInWindow: boolean;
    burstEntry: number;
    bytes: number;
  }[];
  /** The cycle files that must not link: a rank without snapshots, and a CPU tensor. */
  unlinked: string[];
}

const MiB = 2 ** 20;

/** A training loop whose reference cycles gc.collect() frees every 4 steps (two tensors a step). */
export function cycleSnapshot() {
  const generated = generateSnapshotBytes({
    events: 25_000,
    seed: 51,
    cycleBytes: [2 * MiB, 3 * MiB + 100],
    gcEvery: 4,
  });
  return { generated, s: loadSnapshotBytes(generated.bytes) };
}

/**
 * A recorded run as `memlens record --cycles` lays it out: a generated training loop whose
 * reference cycles gc.collect() frees every 4 steps, cut into two verl step windows, and one cycle
 * file per collection, each seen 1 µs before the burst that released its tensors, pointing into
 * the middle of a tensor it freed.
 */
export function writeCycleRun(root: string): CycleRun {
  const { generated, s } = cycleSnapshot();
  const d = s.devices[0]!;
  const it = findIterations(s, d);
  const split = it.start[10]!;
  const windows = [
    { dir: 'steps0-9', from: 0, to: split },
    { dir: 'steps10-19', from: split, to: d.trace.length },
  ].map((w) => {
    const p = join(root, w.dir, 'torch_memory_rank0_pid4242.pickle');
    mkdirSync(join(root, w.dir), { recursive: true });
    writeFileSync(p, sliceBytes(s, d, w.from, w.to));
    return p;
  });
  const a = d.allocations;
  const cycles: CycleRun['cycles'] = [];
  const files = generated.expected.planted![0]!.bursts.map((b, k) => {
    const id = a.ofEntry[b.entry]!;
    const tensor = { bytes: a.size[id]!, data_ptr: a.addr[id]! + 256, shape: [a.size[id]!], dtype: 'uint8' };
    const window = b.entry < split ? 0 : 1;
    cycles.push({
      path: '',
      window,
      allocatedInWindow: a.start[id]! >= (window === 0 ? 0 : split),
      allocation: id,
      burstEntry: b.entry,
      bytes: a.size[id]!,
    });
    return awaitableCycle({ time_us: b.timeUs - 1, step: b.iteration, collection: k + 1 }, [tensor]);
  });
  const other = awaitableCycle({ time_us: 1, rank: 1, pid: 99, collection: 1 }, [
    { bytes: MiB, data_ptr: 4096 },
  ]);
  const cpu = awaitableCycle({ time_us: 2, collection: 99, device: 'cpu' }, [
    { bytes: 4096, data_ptr: 8192, device: 'cpu' },
  ]);
  const paths = writeCycleFiles(root, [...files, other, cpu]);
  for (const [i, c] of cycles.entries()) c.path = paths[i]!;
  return { windows, cycles, unlinked: paths.slice(files.length) };
}
