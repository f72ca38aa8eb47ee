import type { StepMarker, TimelineAxis } from '../../../src/engine/analyses/timeline-axis.js';
import type { TimelineLod } from '../../../src/engine/analyses/timeline-lod.js';
import { formatDuration } from '../../../src/engine/format.js';
import { lowerBound } from '../../../src/engine/model/lower-bound.js';
import { formatBytes } from '../format.js';

/**
 * Canvas drawing of the timeline. A level of detail is painted once (in the worker, see
 * paint-layer.ts) into a bitmap of plot size; every pan/zoom frame only stretches that bitmap into
 * place and draws the overlays, so a frame costs the same whatever the number of allocations.
 */
export interface Plot {
  left: number;
  top: number;
  width: number;
  height: number;
}

export const MARGIN = { left: 64, right: 8, top: 18, bottom: 22 };

/** A level of detail for a window, painted (by the worker) into a bitmap of plot size. */
export interface Layer {
  lod: TimelineLod;
  bitmap: ImageBitmap;
  window: [number, number];
  /** The query it answers (window, stream, search, size): a layer for another stream is stale. */
  key: string;
  /** Top of the y axis in bytes (the level of detail's highest point plus headroom). */
  yMax: number;
}

export interface Frame {
  window: [number, number];
  axis: TimelineAxis;
  layer: Layer | null;
  markers: MarkerSet;
  /** x of the selected entry. */
  cursor: number | null;
  selection: Selection | null;
  /** Allocations the timeline search matched (1 = match), indexed by allocation id. */
  matches?: Uint8Array | null;
  /** Time axis labels count from here. */
  origin: number;
}

/** The pinned allocation: x of its alloc and free entries (null: outside the window) and its bytes at the cursor. */
export interface Selection {
  alloc: number;
  x0: number | null;
  x1: number | null;
  y0: number;
  y1: number;
}

export function drawFrame(g: CanvasRenderingContext2D, plot: Plot, f: Frame): void {
  const [x0, x1] = f.window;
  const toPx = (x: number): number => plot.left + ((x - x0) / (x1 - x0)) * plot.width;
  g.clearRect(0, 0, g.canvas.width, g.canvas.height);
  g.save();
  g.beginPath();
  g.rect(plot.left, plot.top, plot.width, plot.height);
  g.clip();
  if (f.layer) {
    const [l0, l1] = f.layer.window;
    // Stretched only until the worker's layer for this window arrives; smoothing a stretched
    // bitmap cost most of a wheel frame (software raster), nearest-neighbour a fraction of it.
    g.imageSmoothingEnabled = false;
    g.drawImage(f.layer.bitmap, toPx(l0), plot.top, toPx(l1) - toPx(l0), plot.height);
  }
  if (f.matches && f.layer) drawMatches(g, plot, f.layer, f.matches, toPx);
  drawMarkers(g, plot, f.markers, f.window, toPx);
  if (f.selection && f.layer) drawSelection(g, plot, f.layer, f.selection, f.cursor, toPx);
  if (f.cursor !== null) {
    g.strokeStyle = '#d00';
    g.lineWidth = 1;
    const x = Math.round(toPx(f.cursor)) + 0.5;
    g.beginPath();
    g.moveTo(x, plot.top);
    g.lineTo(x, plot.top + plot.height);
    g.stroke();
  }
  g.restore();
  drawAxes(g, plot, f, toPx);
}

/** A run's rectangle on screen: x, y, width, height (at least one pixel tall). */
function runBox(
  plot: Plot,
  layer: NonNullable<Frame['layer']>,
  toPx: (x: number) => number,
): (r: number) => [number, number, number, number] {
  const { lod, window } = layer;
  const sy = plot.height / layer.yMax;
  const colPx = (c: number): number => toPx(window[0] + (c / lod.columns) * (window[1] - window[0]));
  return (r) => {
    const x = colPx(lod.runX0[r]!);
    const y = plot.top + plot.height - lod.runY1[r]! * sy;
    return [x, y, colPx(lod.runX1[r]!) - x, Math.max(1, (lod.runY1[r]! - lod.runY0[r]!) * sy)];
  };
}

/**
 * Search matches, flagged per allocation id: their runs are washed yellow and outlined. A run of
 * merged sub-pixel allocations is marked when the allocation that gives it its colour matches.
 */
function drawMatches(
  g: CanvasRenderingContext2D,
  plot: Plot,
  layer: NonNullable<Frame['layer']>,
  matches: Uint8Array,
  toPx: (x: number) => number,
): void {
  const { lod } = layer;
  const box = runBox(plot, layer, toPx);
  g.fillStyle = 'rgba(255, 221, 0, 0.75)';
  g.strokeStyle = '#b36b00';
  g.lineWidth = 1;
  for (let r = 0; r < lod.runs; r++) {
    const id = lod.runAlloc[r]! >= 0 ? lod.runAlloc[r]! : lod.runTone[r]!;
    if (matches[id] !== 1) continue;
    const b = box(r);
    g.fillRect(...b);
    g.strokeRect(...b);
  }
}

/** Outlines the pinned allocation's runs, its lifetime, and where it sits at the cursor. */
function drawSelection(
  g: CanvasRenderingContext2D,
  plot: Plot,
  layer: NonNullable<Frame['layer']>,
  sel: Selection,
  cursor: number | null,
  toPx: (x: number) => number,
): void {
  const { lod } = layer;
  const sy = plot.height / layer.yMax;
  const yPx = (b: number): number => plot.top + plot.height - b * sy;
  g.lineWidth = 2;
  g.strokeStyle = '#000';
  const box = runBox(plot, layer, toPx);
  for (let r = 0; r < lod.runs; r++) {
    if (lod.runAlloc[r] === sel.alloc) g.strokeRect(...box(r));
  }
  g.lineWidth = 1;
  g.strokeStyle = 'rgba(0,0,0,0.6)';
  for (const x of [sel.x0, sel.x1]) {
    if (x === null) continue;
    g.beginPath();
    g.moveTo(Math.round(toPx(x)) + 0.5, yPx(sel.y1) - 8);
    g.lineTo(Math.round(toPx(x)) + 0.5, plot.top + plot.height);
    g.stroke();
  }
  if (cursor !== null) {
    // Visible even when the allocation is under a pixel tall and merged at this zoom.
    g.fillStyle = '#000';
    const x = toPx(cursor);
    g.fillRect(x - 5, yPx(sel.y1) - 1, 10, Math.max(2, (sel.y1 - sel.y0) * sy) + 2);
  }
}

/**
 * Marker starts by x, step markers first (they get their labels first), prepared once per
 * marker list: a frame only binary-searches the visible ones instead of filtering thousands.
 */
export interface MarkerSet {
  groups: { x: Float64Array; name: string[] }[];
}

export function prepareMarkers(markers: StepMarker[]): MarkerSet {
  const starts = markers.filter((m) => m.stage === 'START' || m.stage === '').sort((a, b) => a.x - b.x);
  const group = (ms: StepMarker[]) => ({ x: Float64Array.from(ms, (m) => m.x), name: ms.map((m) => m.name) });
  return { groups: [group(starts.filter(isStep)), group(starts.filter((m) => !isStep(m)))] };
}

function drawMarkers(
  g: CanvasRenderingContext2D,
  plot: Plot,
  markers: MarkerSet,
  window: [number, number],
  toPx: (x: number) => number,
): void {
  g.fillStyle = '#555';
  g.font = '10px system-ui, sans-serif';
  g.strokeStyle = 'rgba(0,0,0,0.35)';
  g.setLineDash([3, 3]);
  const [x0, x1] = window;
  const axisAt = (px: number): number => x0 + ((px - plot.left) / plot.width) * (x1 - x0);
  const right = plot.left + plot.width;
  const ranges = markers.groups.map((m) => [lowerBound(m.x, x0), lowerBound(m.x, x1 + 1e-9)] as const);
  const visible = ranges.reduce((n, [lo, hi]) => n + hi - lo, 0);
  // Dense markers would hide the plot: then only the labelled ones get a line.
  const dense = visible > plot.width / 12;
  const labels = new LabelRow(g, plot);
  const line = (x: number): void => {
    g.beginPath();
    g.moveTo(x, plot.top);
    g.lineTo(x, plot.top + plot.height);
    g.stroke();
  };
  markers.groups.forEach((m, gi) => {
    const [lo, hi] = ranges[gi]!;
    if (!dense) {
      for (let i = lo; i < hi; i++) {
        const x = Math.round(toPx(m.x[i]!)) + 0.5;
        if (x < plot.left || x > right) continue;
        labels.place(m.name[i]!, x);
        line(x);
      }
      return;
    }
    // Thousands of markers (a whole 1 GB trace's steps): walk the free pixels instead of the
    // markers, jumping over placed labels, so a frame's cost is bounded by the plot's width.
    for (let px = plot.left; px <= right; ) {
      const i = lowerBound(m.x, axisAt(px));
      if (i >= hi) break;
      const x = Math.round(toPx(m.x[i]!)) + 0.5;
      if (x > right) break;
      const blocked = x < plot.left ? -1 : labels.place(m.name[i]!, x);
      if (blocked === PLACED) line(x);
      px = blocked >= 0 ? plot.left + labels.freeFrom(blocked) : x + 1;
    }
  });
  g.setLineDash([]);
}

const PLACED = -2;

/** The labels along the plot's top: pixel columns taken by a placed label (labels never overlap). */
class LabelRow {
  private readonly taken: Uint8Array;
  constructor(
    private readonly g: CanvasRenderingContext2D,
    private readonly plot: Plot,
  ) {
    this.taken = new Uint8Array(Math.ceil(plot.width) + 1);
  }

  /** Draws the label at x if its columns are free: PLACED, or the first taken column in its way. */
  place(name: string, x: number): number {
    const c = Math.floor(x - this.plot.left);
    if (this.taken[c] === 1) return c;
    const end = Math.min(this.taken.length, c + Math.ceil(this.g.measureText(name).width + 8));
    for (let k = c; k < end; k++) if (this.taken[k] === 1) return k;
    this.g.fillText(name, x + 2, this.plot.top + 10);
    this.taken.fill(1, c, end);
    return PLACED;
  }

  /** The first free column at or after a taken one. */
  freeFrom(c: number): number {
    let k = c;
    while (k < this.taken.length && this.taken[k] === 1) k++;
    return k;
  }
}

function isStep(m: StepMarker): boolean {
  return m.name.startsWith('ProfilerStep');
}

function drawAxes(g: CanvasRenderingContext2D, plot: Plot, f: Frame, toPx: (x: number) => number): void {
  g.fillStyle = '#333';
  g.strokeStyle = '#999';
  g.font = '11px system-ui, sans-serif';
  g.strokeRect(plot.left - 0.5, plot.top - 0.5, plot.width + 1, plot.height + 1);
  if (f.layer) {
    g.textAlign = 'right';
    for (const v of niceTicks(0, f.layer.yMax, 5)) {
      const y = plot.top + plot.height - (v / f.layer.yMax) * plot.height;
      g.fillText(formatBytes(v), plot.left - 4, y + 4);
    }
  }
  g.textAlign = 'center';
  const [x0, x1] = f.window;
  for (const v of niceTicks(x0, x1, Math.max(2, Math.floor(plot.width / 110)))) {
    const label = f.axis === 'entry' ? String(v) : formatDuration(Math.round(v - f.origin));
    const x = toPx(v);
    // A label cut by the canvas edge reads as a different number.
    if (x + g.measureText(label).width / 2 > plot.left + plot.width + MARGIN.right) continue;
    g.fillText(label, x, plot.top + plot.height + 15);
  }
  g.textAlign = 'left';
}

/** Round tick values (1, 2, 5 × 10^k) inside [lo, hi]. */
export function niceTicks(lo: number, hi: number, count: number): number[] {
  const span = hi - lo;
  if (!(span > 0)) return [];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(v);
  return out;
}
