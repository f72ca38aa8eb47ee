/**
 * How a reference cycle holds each of its tensors, as a path a reader follows: from a node on the
 * cycle, one labelled reference after another, to the tensor
 * (`Callback.fn → method.__self__ → AwaitableTensor.cache → dict['value'] → Tensor 2.00 MiB`).
 */
import { formatBytes } from '../../base/format.js';
import type { CycleEdge, CycleGraph, CycleNode, EdgeKind } from './cycle-file.js';

export interface PathHop {
  /** The node the reference leaves from, and the reference. */
  node: number;
  type: string;
  label: string;
  kind: EdgeKind;
}

export interface TensorPath {
  /** The tensor's node id. */
  tensor: number;
  /** References from the start node to the tensor (empty when the tensor is itself on the cycle). */
  hops: PathHop[];
  /** Whether the path starts on the cycle (false: no cycle node reaches the tensor; it starts at a root of the garbage). */
  from_cycle: boolean;
}

/** Containers and machinery: a path that starts at a class of the user's reads better. */
const PLUMBING = new Set([
  'dict',
  'list',
  'tuple',
  'set',
  'cell',
  'function',
  'method',
  'builtin_function_or_method',
  'frame',
  'Tensor',
  'Parameter',
]);

/** References with a name read better than anonymous ones, and an attribute best of all. */
const KIND_ORDER: Record<EdgeKind, number> = {
  attribute: 0,
  key: 1,
  index: 2,
  self: 3,
  closure: 4,
  local: 5,
  other: 6,
};

/**
 * For every tensor of the graph, a path from the cycle to it: from the nearest node of a class of
 * the user's on the cycle (a container or function says less than the object that owns it), else
 * from the nearest node; shortest from there, each hop a named reference rather than an anonymous
 * one; lower ids break what is left, so the same file always reads the same.
 */
export function tensorPaths(g: CycleGraph): TensorPath[] {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const into = new Map<number, CycleEdge[]>();
  const out = new Map<number, CycleEdge[]>();
  for (const e of g.edges) {
    push(into, e.to, e);
    push(out, e.from, e);
  }
  for (const list of out.values())
    list.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.to - b.to);
  const onCycle = new Set(g.cycle);
  return g.nodes
    .filter((n) => n.tensor !== null)
    .map((t) => {
      const dist = distancesTo(t.id, into);
      const cycleStarts = g.cycle.filter((id) => dist.has(id));
      const from_cycle = cycleStarts.length > 0;
      const starts = from_cycle ? cycleStarts : roots(g, into, dist);
      const start = best(starts, dist, byId) ?? t.id;
      return {
        tensor: t.id,
        hops: walk(start, t.id, dist, out, byId),
        from_cycle: from_cycle || onCycle.has(t.id),
      };
    });
}

function push(m: Map<number, CycleEdge[]>, k: number, e: CycleEdge): void {
  const list = m.get(k);
  if (list) list.push(e);
  else m.set(k, [e]);
}

/** Hops from every node that reaches `target` to it (breadth first over reversed edges). */
function distancesTo(target: number, into: Map<number, CycleEdge[]>): Map<number, number> {
  const dist = new Map([[target, 0]]);
  let frontier = [target];
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const id of frontier)
      for (const e of into.get(id) ?? [])
        if (!dist.has(e.from)) {
          dist.set(e.from, dist.get(id)! + 1);
          next.push(e.from);
        }
    frontier = next;
  }
  return dist;
}

/** Nodes nothing in the garbage refers to that reach the tensor (where no cycle node does). */
function roots(g: CycleGraph, into: Map<number, CycleEdge[]>, dist: Map<number, number>): number[] {
  return g.nodes.filter((n) => dist.has(n.id) && (into.get(n.id) ?? []).length === 0).map((n) => n.id);
}

/** The nearest class of the user's on the cycle, else the nearest node. */
function best(ids: number[], dist: Map<number, number>, byId: Map<number, CycleNode>): number | undefined {
  const plumbing = (id: number) => (PLUMBING.has(byId.get(id)!.type) ? 1 : 0);
  return [...ids].sort((a, b) => plumbing(a) - plumbing(b) || dist.get(a)! - dist.get(b)! || a - b)[0];
}

function walk(
  start: number,
  target: number,
  dist: Map<number, number>,
  out: Map<number, CycleEdge[]>,
  byId: Map<number, CycleNode>,
): PathHop[] {
  const hops: PathHop[] = [];
  for (let at = start; at !== target; ) {
    const d = dist.get(at)!;
    const e = (out.get(at) ?? []).find((x) => dist.get(x.to) === d - 1)!;
    hops.push({ node: at, type: byId.get(at)!.type, label: e.label, kind: e.kind });
    at = e.to;
  }
  return hops;
}

/** Hops shown before a path is cut in the middle with "…". */
export const PATH_HOPS_SHOWN = 6;

/** The path in words; past `max` hops the first and last ones with "…" between them. */
export function pathWords(path: TensorPath, g: CycleGraph, max = PATH_HOPS_SHOWN): string {
  const tensor = g.nodes.find((n) => n.id === path.tensor)!;
  const steps = path.hops.map(hopWords);
  const shown = steps.length > max ? [...steps.slice(0, max - 2), '…', ...steps.slice(-2)] : steps;
  return [...shown, tensorWords(tensor)].join(' → ');
}

/** "AwaitableTensor.__dict__", "dict['value']", "list[0]": the node's type, then the reference. */
export function hopWords(h: PathHop): string {
  if (h.label === '' || h.label === '?') return h.type;
  return h.label.startsWith('[') ? `${h.type}${h.label}` : `${h.type}.${h.label}`;
}

/** "Tensor 512 MiB" (its type as the graph names it: Parameter, a subclass). */
export function tensorWords(n: CycleNode): string {
  return `${n.type} ${formatBytes(n.tensor?.bytes ?? 0)}`;
}
