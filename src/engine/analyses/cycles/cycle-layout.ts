/**
 * A recorded cycle's graph laid out for drawing: layers by references from the cycle, left to
 * right, so the path to a tensor reads the way its words do. Nodes are boxes sized to their
 * labels; an edge to a later layer is a curve between box sides, one that points back (the edge
 * that closes the cycle) loops under the boxes. A simple layered (Sugiyama-style) layout: one
 * breadth-first layering, one barycentre pass to order each layer; graphs are bounded by the
 * recorder (1,000 nodes), and most cycles are a handful.
 */
import { formatBytes } from '../../base/format.js';
import type { CycleGraph } from './cycle-file.js';
import { tensorPaths } from './cycle-paths.js';

export interface LaidNode {
  id: number;
  x: number;
  y: number;
  w: number;
  h: number;
  /** The label, cut to fit the box ("…"); `title` is the whole of it. */
  text: string;
  title: string;
  /** A tensor's size, drawn under its label; null for other nodes. */
  size: string | null;
  on_cycle: boolean;
}

export interface LaidEdge {
  from: number;
  to: number;
  label: string;
  /** SVG path data, and where its label goes. */
  d: string;
  lx: number;
  ly: number;
  on_cycle: boolean;
}

export interface CycleLayout {
  width: number;
  height: number;
  nodes: LaidNode[];
  edges: LaidEdge[];
  /** Nodes of the graph left out (a graph larger than `maxNodes` shows the paths to its largest tensors). */
  hidden: number;
}

/** Nodes drawn at most: beyond, a picture of every node says less than the paths to the largest tensors. */
export const DRAWN_NODES = 40;

/** Characters of a label a box shows; pixels per character of the 11 px sans-serif it is drawn in. */
const LABEL_CHARS = 36;
const CHAR_PX = 6.6;
const PAD = 10;
const NODE_H = 26;
const TENSOR_H = 40;
const LAYER_GAP = 90;
const ROW_GAP = 22;
const MARGIN = 20;

export function layoutCycle(whole: CycleGraph, maxNodes = DRAWN_NODES): CycleLayout {
  const g = whole.nodes.length > maxNodes ? pathsToLargest(whole, maxNodes) : whole;
  const onCycle = new Set(g.cycle);
  const layer = layers(g);
  const byLayer: number[][] = [];
  for (const n of g.nodes) (byLayer[layer.get(n.id)!] ??= []).push(n.id);
  orderByBarycentre(g, byLayer);
  const sized = new Map(
    g.nodes.map((n) => {
      const text = n.label.length > LABEL_CHARS ? `${n.label.slice(0, LABEL_CHARS - 1)}…` : n.label;
      const size = n.tensor === null ? null : formatBytes(n.tensor.bytes);
      const chars = Math.max(text.length, size?.length ?? 0, 4);
      return [
        n.id,
        { n, text, size, w: Math.ceil(chars * CHAR_PX + 2 * PAD), h: size === null ? NODE_H : TENSOR_H },
      ];
    }),
  );
  const columnHeight = byLayer.map(
    (ids) => ids.reduce((s, id) => s + sized.get(id)!.h, 0) + ROW_GAP * (ids.length - 1),
  );
  const tallest = Math.max(0, ...columnHeight);
  const nodes: LaidNode[] = [];
  let x = MARGIN;
  byLayer.forEach((ids, k) => {
    const w = Math.max(...ids.map((id) => sized.get(id)!.w));
    let y = MARGIN + (tallest - columnHeight[k]!) / 2;
    for (const id of ids) {
      const s = sized.get(id)!;
      nodes.push({
        id,
        x: x + (w - s.w) / 2,
        y,
        w: s.w,
        h: s.h,
        text: s.text,
        title: s.n.label,
        size: s.size,
        on_cycle: onCycle.has(id),
      });
      y += s.h + ROW_GAP;
    }
    x += w + LAYER_GAP;
  });
  const at = new Map(nodes.map((n) => [n.id, n]));
  const bottom = MARGIN + tallest;
  let loops = 0;
  const edges = g.edges.map((e): LaidEdge => {
    const a = at.get(e.from)!;
    const b = at.get(e.to)!;
    const base = {
      from: e.from,
      to: e.to,
      label: e.label,
      on_cycle: onCycle.has(e.from) && onCycle.has(e.to),
    };
    if (layer.get(e.to)! > layer.get(e.from)!) {
      const [x0, y0, x3, y3] = [a.x + a.w, a.y + a.h / 2, b.x, b.y + b.h / 2];
      const mx = (x0 + x3) / 2;
      return {
        ...base,
        d: `M${x0},${y0} C${mx},${y0} ${mx},${y3} ${x3},${y3}`,
        lx: mx,
        ly: (y0 + y3) / 2 - 4,
      };
    }
    // Back to an earlier layer (or within one): under every box, each loop a little lower.
    const dip = bottom + 28 + 18 * loops++;
    const [x0, y0, x3, y3] = [a.x + a.w / 2, a.y + a.h, b.x + b.w / 2, b.y + b.h];
    return {
      ...base,
      d: `M${x0},${y0} C${x0},${dip} ${x3},${dip} ${x3},${y3}`,
      lx: (x0 + x3) / 2,
      ly: (y0 + 3 * dip + 3 * dip + y3) / 8 - 4,
    };
  });
  return {
    width: x - LAYER_GAP + MARGIN,
    height: bottom + (loops > 0 ? 28 + 18 * loops : 0) + MARGIN,
    nodes,
    edges,
    hidden: whole.nodes.length - g.nodes.length,
  };
}

/**
 * The part of a large graph worth drawing: the paths from the cycle to its tensors, largest
 * tensor first, while they fit in `max` nodes (the first one always), with the references among
 * the nodes kept.
 */
function pathsToLargest(g: CycleGraph, max: number): CycleGraph {
  const bytes = new Map(g.nodes.map((n) => [n.id, n.tensor?.bytes ?? 0]));
  const paths = tensorPaths(g).sort(
    (a, b) => bytes.get(b.tensor)! - bytes.get(a.tensor)! || a.tensor - b.tensor,
  );
  const keep = new Set<number>();
  for (const p of paths) {
    const ids = [...p.hops.map((h) => h.node), p.tensor].filter((id) => !keep.has(id));
    if (keep.size > 0 && keep.size + ids.length > max) break;
    for (const id of ids) keep.add(id);
  }
  return {
    ...g,
    nodes: g.nodes.filter((n) => keep.has(n.id)),
    edges: g.edges.filter((e) => keep.has(e.from) && keep.has(e.to)),
    cycle: g.cycle.filter((id) => keep.has(id)),
  };
}

/**
 * Breadth-first depth by references, from the start of the largest tensor's path (so that path
 * runs left to right), then from the other cycle nodes and any node still unplaced.
 */
function layers(g: CycleGraph): Map<number, number> {
  const out = new Map<number, number[]>();
  for (const e of g.edges) (out.get(e.from) ?? out.set(e.from, []).get(e.from)!).push(e.to);
  const largest = [...g.nodes]
    .filter((n) => n.tensor !== null)
    .sort((a, b) => b.tensor!.bytes - a.tensor!.bytes)[0];
  const start = largest ? tensorPaths(g).find((p) => p.tensor === largest.id)?.hops[0]?.node : undefined;
  const roots = [...(start === undefined ? [] : [start]), ...g.cycle, ...g.nodes.map((n) => n.id)];
  const layer = new Map<number, number>();
  for (const root of roots) {
    if (layer.has(root)) continue;
    layer.set(root, 0);
    let frontier = [root];
    for (let depth = 1; frontier.length > 0; depth++) {
      const next: number[] = [];
      for (const id of frontier)
        for (const to of out.get(id) ?? [])
          if (!layer.has(to)) {
            layer.set(to, depth);
            next.push(to);
          }
      frontier = next;
    }
  }
  return layer;
}

/** Each layer ordered by the mean row of the nodes that refer to it in earlier layers. */
function orderByBarycentre(g: CycleGraph, byLayer: number[][]): void {
  const row = new Map<number, number>();
  const into = new Map<number, number[]>();
  for (const e of g.edges) (into.get(e.to) ?? into.set(e.to, []).get(e.to)!).push(e.from);
  byLayer.forEach((ids, k) => {
    if (k > 0) {
      const key = (id: number) => {
        const rows = (into.get(id) ?? []).map((f) => row.get(f)).filter((r) => r !== undefined);
        return rows.length === 0 ? Number.POSITIVE_INFINITY : rows.reduce((s, r) => s + r, 0) / rows.length;
      };
      ids.sort((a, b) => key(a) - key(b) || a - b);
    }
    for (const [i, id] of ids.entries()) row.set(id, i);
  });
}
