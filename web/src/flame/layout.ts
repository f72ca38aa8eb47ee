import type { FlameTree } from '../../../src/engine/views/flame/index.js';
import { frameLabel } from './labels.js';

export const ROW = 18;

/** Where each drawn node sits: its row, and x and width in CSS pixels. */
export interface FlameLayout {
  nodes: number[];
  x: number[];
  w: number[];
  rows: number;
}

/** Each node's parent (-1 for the root), from the preorder depths. */
export function parentsOf(t: FlameTree): Int32Array {
  const parent = new Int32Array(t.frame.length).fill(-1);
  const open: number[] = [];
  for (let i = 0; i < t.frame.length; i++) {
    open.length = t.depth[i]!;
    parent[i] = open.length > 0 ? open[open.length - 1]! : -1;
    open.push(i);
  }
  return parent;
}

/**
 * The icicle with node `zoom` spanning the width: its ancestors full width above it, its subtree
 * below, children left to right widest first. Subtrees narrower than half a pixel are skipped
 * whole, so the cost follows what is visible, not how many stacks the file has.
 */
export function layoutFlame(t: FlameTree, parent: Int32Array, zoom: number, width: number): FlameLayout {
  const out: FlameLayout = { nodes: [], x: [], w: [], rows: 0 };
  for (let a = parent[zoom]!; a >= 0; a = parent[a]!) {
    out.nodes.push(a);
    out.x.push(0);
    out.w.push(width);
  }
  const scale = t.bytes[zoom]! > 0 ? width / t.bytes[zoom]! : 0;
  const cursor = new Float64Array(64);
  const base = t.depth[zoom]!;
  cursor[0] = 0;
  let i = zoom;
  const end = zoom + t.size[zoom]!;
  while (i < end) {
    const level = t.depth[i]! - base;
    if (level + 1 >= cursor.length) {
      i += t.size[i]!;
      continue;
    }
    const x = cursor[level]!;
    const w = t.bytes[i]! * scale;
    cursor[level] = x + w;
    if (w < 0.5) {
      i += t.size[i]!;
      continue;
    }
    cursor[level + 1] = x;
    out.nodes.push(i);
    out.x.push(x);
    out.w.push(w);
    out.rows = Math.max(out.rows, t.depth[i]! + 1);
    i++;
  }
  return out;
}

/** The node under a point, or -1. */
export function hitFlame(t: FlameTree, l: FlameLayout, px: number, py: number): number {
  const row = Math.floor(py / ROW);
  for (let k = 0; k < l.nodes.length; k++)
    if (t.depth[l.nodes[k]!] === row && px >= l.x[k]! && px < l.x[k]! + l.w[k]!) return l.nodes[k]!;
  return -1;
}

export function frameWhere(t: FlameTree, i: number): string {
  const f = t.frames[t.frame[i]!];
  return f === undefined ? '' : `${f.filename}:${f.line}`;
}

/** User frames warm, library and interpreter frames grey-blue; the shade varies by name so neighbours differ. */
function colorOf(t: FlameTree, i: number, dimmed: boolean): string {
  const f = t.frame[i]!;
  if (f < 0) return dimmed ? '#cfd8dc' : '#90a4ae';
  const frame = t.frames[f]!;
  let h = 0;
  for (let k = 0; k < frame.name.length; k++) h = (h * 31 + frame.name.charCodeAt(k)) | 0;
  const shade = 60 + (Math.abs(h) % 15);
  if (dimmed) return `hsl(0, 0%, ${shade + 20}%)`;
  return frame.user ? `hsl(${20 + (Math.abs(h) % 25)}, 85%, ${shade}%)` : `hsl(210, 18%, ${shade + 8}%)`;
}

export function drawFlame(
  g: CanvasRenderingContext2D,
  t: FlameTree,
  l: FlameLayout,
  zoom: number,
  hover: number,
  width: number,
): void {
  g.clearRect(0, 0, width, l.rows * ROW);
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  for (let k = 0; k < l.nodes.length; k++) {
    const i = l.nodes[k]!;
    const y = t.depth[i]! * ROW;
    const above = t.depth[i]! < t.depth[zoom]!;
    g.fillStyle = colorOf(t, i, above);
    g.fillRect(l.x[k]!, y, Math.max(0.5, l.w[k]! - 1), ROW - 1);
    if (i === hover) {
      g.strokeStyle = '#000';
      g.strokeRect(l.x[k]! + 0.5, y + 0.5, l.w[k]! - 2, ROW - 2);
    }
    if (l.w[k]! > 28) {
      const f = t.frames[t.frame[i]!];
      g.fillStyle = '#111';
      g.font = f?.user ? 'bold 11px system-ui, sans-serif' : '11px system-ui, sans-serif';
      g.fillText(fitText(g, frameLabel(t, i), l.w[k]! - 6), l.x[k]! + 3, y + ROW / 2);
    }
  }
}

function fitText(g: CanvasRenderingContext2D, s: string, w: number): string {
  if (g.measureText(s).width <= w) return s;
  let n = Math.floor((s.length * w) / g.measureText(s).width);
  while (n > 0 && g.measureText(`${s.slice(0, n)}…`).width > w) n--;
  return n > 0 ? `${s.slice(0, n)}…` : '';
}
