/**
 * A reference-cycle graph as `memlens record --cycles` writes it (docs/cycles-format.md, schema 1):
 * one garbage collection's garbage that held tensors, as nodes, labelled edges and the ids of the
 * nodes on a cycle. Reading checks every field the analyses use and names the first one that is
 * wrong, so a truncated or foreign JSON file is one plain sentence, never a crash later on.
 */
import { SnapshotError } from '../../base/errors.js';
import { isDict, type PyDict } from '../../values/py-values.js';

export const CYCLES_SCHEMA = 1;

export type EdgeKind = 'attribute' | 'key' | 'index' | 'closure' | 'self' | 'local' | 'other';
export const EDGE_KINDS: readonly EdgeKind[] = [
  'attribute',
  'key',
  'index',
  'closure',
  'self',
  'local',
  'other',
];

export interface CycleFrame {
  filename: string;
  line: number;
  name: string;
}

export interface CycleTensor {
  shape: number[];
  dtype: string;
  bytes: number;
  data_ptr: number;
  /** "cuda:0", "cpu", … */
  device: string;
  /** The allocation stack, innermost first, when history was on; else null. */
  stack: CycleFrame[] | null;
}

export interface CycleNode {
  id: number;
  type: string;
  label: string;
  tensor: CycleTensor | null;
}

export interface CycleEdge {
  from: number;
  to: number;
  label: string;
  kind: EdgeKind;
}

export interface CycleGraph {
  rank: number;
  pid: number;
  hostname: string | null;
  collection: number;
  generation: number;
  /** µs since the Unix epoch: the clock of snapshot trace entries' time_us. */
  time_us: number;
  step: number | null;
  device: string;
  truncated: boolean;
  nodes: CycleNode[];
  edges: CycleEdge[];
  /** Ids of the nodes on a reference cycle. */
  cycle: number[];
}

/** A cycle file's text → its graph; a SnapshotError naming the first thing wrong. */
export function parseCycleText(text: string): CycleGraph {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (e) {
    throw new SnapshotError(`not a memlens cycle file: invalid JSON (${(e as Error).message})`);
  }
  return parseCycleGraph(root);
}

export function parseCycleGraph(root: unknown): CycleGraph {
  if (!isDict(root)) throw bad(`the top level is ${shown(root)}, expected an object`);
  if (!('memlens_cycles' in root)) throw bad(`no 'memlens_cycles' key (keys: ${keysOf(root)})`);
  if (root.memlens_cycles !== CYCLES_SCHEMA)
    throw bad(
      `schema ${shown(root.memlens_cycles)}; this memlens reads schema ${CYCLES_SCHEMA} (a newer memlens may read it)`,
    );
  const nodes = list(root, 'nodes').map((n, i) => node(n, `nodes[${i}]`));
  const ids = new Set<number>();
  for (const [i, n] of nodes.entries()) {
    if (ids.has(n.id)) throw bad(`nodes[${i}].id ${n.id} is used by an earlier node`);
    ids.add(n.id);
  }
  const known = (id: number, at: string) => {
    if (!ids.has(id)) throw bad(`${at} is ${id}, which is no node's id`);
    return id;
  };
  const edges = list(root, 'edges').map((e, i) => edge(e, `edges[${i}]`, known));
  const cycle = list(root, 'cycle').map((v, i) => known(int(v, `cycle[${i}]`), `cycle[${i}]`));
  return {
    rank: int(root.rank, 'rank'),
    pid: int(root.pid, 'pid'),
    hostname: optionalString(root.hostname, 'hostname'),
    collection: int(root.collection, 'collection'),
    generation: int(root.generation, 'generation'),
    time_us: int(root.time_us, 'time_us'),
    step: root.step === null || root.step === undefined ? null : int(root.step, 'step'),
    device: string(root.device, 'device'),
    truncated: bool(root.truncated, 'truncated'),
    nodes,
    edges,
    cycle,
  };
}

function node(v: unknown, at: string): CycleNode {
  if (!isDict(v)) throw bad(`${at} is ${shown(v)}, expected an object`);
  return {
    id: int(v.id, `${at}.id`),
    type: string(v.type, `${at}.type`),
    label: string(v.label, `${at}.label`),
    tensor: v.tensor === undefined || v.tensor === null ? null : tensor(v.tensor, `${at}.tensor`),
  };
}

function tensor(v: unknown, at: string): CycleTensor {
  if (!isDict(v)) throw bad(`${at} is ${shown(v)}, expected an object`);
  if (!Array.isArray(v.shape)) throw bad(`${at}.shape is ${shown(v.shape)}, expected a list`);
  return {
    shape: v.shape.map((d, i) => int(d, `${at}.shape[${i}]`)),
    dtype: string(v.dtype, `${at}.dtype`),
    bytes: int(v.bytes, `${at}.bytes`),
    data_ptr: int(v.data_ptr, `${at}.data_ptr`),
    device: string(v.device, `${at}.device`),
    stack: v.stack === undefined || v.stack === null ? null : frames(v.stack, `${at}.stack`),
  };
}

function frames(v: unknown, at: string): CycleFrame[] {
  if (!Array.isArray(v)) throw bad(`${at} is ${shown(v)}, expected a list or null`);
  return v.map((f, i) => {
    if (!isDict(f)) throw bad(`${at}[${i}] is ${shown(f)}, expected an object`);
    return {
      filename: string(f.filename, `${at}[${i}].filename`),
      line: int(f.line, `${at}[${i}].line`),
      name: string(f.name, `${at}[${i}].name`),
    };
  });
}

function edge(v: unknown, at: string, known: (id: number, at: string) => number): CycleEdge {
  if (!isDict(v)) throw bad(`${at} is ${shown(v)}, expected an object`);
  const kind = string(v.kind, `${at}.kind`);
  if (!(EDGE_KINDS as readonly string[]).includes(kind))
    throw bad(`${at}.kind is '${kind}', expected one of ${EDGE_KINDS.join(', ')}`);
  return {
    from: known(int(v.from, `${at}.from`), `${at}.from`),
    to: known(int(v.to, `${at}.to`), `${at}.to`),
    label: string(v.label, `${at}.label`),
    kind: kind as EdgeKind,
  };
}

function list(o: PyDict, key: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) throw bad(`'${key}' is ${shown(v)}, expected a list`);
  return v;
}

/** Non-negative integers: ids, counts, bytes, addresses and µs times all are. */
function int(v: unknown, at: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw bad(`${at} is ${shown(v)}, expected a non-negative integer`);
  return v;
}

function string(v: unknown, at: string): string {
  if (typeof v !== 'string') throw bad(`${at} is ${shown(v)}, expected a string`);
  return v;
}

function optionalString(v: unknown, at: string): string | null {
  return v === undefined || v === null ? null : string(v, at);
}

function bool(v: unknown, at: string): boolean {
  if (typeof v !== 'boolean') throw bad(`${at} is ${shown(v)}, expected true or false`);
  return v;
}

/** A JSON value as a message quotes it: scalars as written (cut short), containers by kind. */
function shown(v: unknown): string {
  if (v === undefined) return 'missing';
  if (Array.isArray(v)) return 'a list';
  if (isDict(v)) return 'an object';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function keysOf(o: PyDict): string {
  const keys = Object.keys(o).slice(0, 5);
  return keys.length === 0 ? 'none' : keys.map((k) => `'${k}'`).join(', ');
}

function bad(what: string): SnapshotError {
  return new SnapshotError(`not a memlens cycle file: ${what}`);
}
