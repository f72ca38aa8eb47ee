import type { PoolGroup } from '../../../src/engine/analyses/views/pools/pool-envelopes.js';
import type { StepMarker, TimelineAxis } from '../../../src/engine/analyses/views/timeline/timeline-axis.js';
import type { TimelineLod } from '../../../src/engine/analyses/views/timeline/timeline-lod.js';
import { formatDuration } from '../../../src/engine/format.js';
import { lowerBound } from '../../../src/engine/model/lower-bound.js';
import { formatBytes } from '../format.js';

/**
 * Canvas drawing of the timeline, in three parts that change at different rates:
 * - the layer (painted by the worker, paint-layer.ts) and its marks (search matches, the pinned
 *   allocation, the cursor, step marker lines), drawn in the layer's own window once per layer or
 *   selection: a pan/zoom frame only moves and scales them with a CSS transform (compositor work);
 * - the y axis, drawn once per layer (the plot's border is CSS);
 * - the window strips (x axis labels, step marker labels), small canvases redrawn every frame so
 *   text stays sharp and correct while the layer under it is stretched.
 * Nothing here walks the allocations; a frame's cost is bounded by the plot's width.
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
  /** groups: the pools timeline's (pool, stream) groups, which its runs' parts name. */
  lod: TimelineLod & { groups?: PoolGroup[] };
  bitmap: ImageBitmap;
  window: [number, number];
  /** The query it answers (window, stream, search, size): a layer for another stream is stale. */
  key: string;
  /** Top of the y axis in bytes (the level of detail's highest point plus headroom). */
  yMax: number;
}

/** What the marks show, in the layer's own window. */
export interface Marks {
  layer: Layer;
  markers: MarkerSet;
  /** x of the selected entry. */
  cursor: number | null;
  selection: Selection | null;
  /** Allocations the timeline search matched (1 = match), indexed by allocation id. */
  matches?: Uint8Array | null;
}

/** The pinned allocation: x of its alloc and free entries (null: outside the window) and its bytes at the cursor. */
export interface Selection {
  alloc: number;
  x0: number | null;
  x1: number | null;
  y0: number;
  y1: number;
}

/** Maps an axis value to a pixel of a plot showing `window`. */
export function axisToPx(plot: Plot, [x0, x1]: [number, number]): (x: number) => number {
  return (x) => plot.left + ((x - x0) / (x1 - x0)) * plot.width;
}

/**
 * The layer as shown, on a canvas of its size (plot at 0,0) that moves with it: the worker's
 * bitmap, then what lies at a fixed place on the axis: search matches, the pinned allocation,
 * step marker lines and the cursor.
 */
export function paintShownLayer(g: CanvasRenderingContext2D, plot: Plot, m: Marks): void {
  g.fillStyle = '#fff';
  g.fillRect(0, 0, plot.width, plot.height);
  g.imageSmoothingEnabled = false;
  g.drawImage(m.layer.bitmap, 0, 0, plot.width, plot.height);
  const toPx = axisToPx(plot, m.layer.window);
  if (m.matches) drawMatches(g, plot, m.layer, m.matches, toPx);
  drawMarkers(g, plot, m.markers, m.layer.window, toPx, 'lines');
  if (m.selection) drawSelection(g, plot, m.layer, m.selection, m.cursor, toPx);
  if (m.cursor !== null) {
    g.strokeStyle = '#d00';
    g.lineWidth = 1;
    const x = Math.round(toPx(m.cursor)) + 0.5;
    g.beginPath();
    g.moveTo(x, plot.top);
    g.lineTo(x, plot.top + plot.height);
    g.stroke();
  }
}

/** The y axis's labels, in the left margin: they change only with the layer (its top in bytes). */
export function drawYAxis(g: CanvasRenderingContext2D, plot: Plot, layer: Layer | null): void {
  g.fillStyle = '#333';
  g.font = AXIS_FONT;
  if (layer === null) return;
  g.textAlign = 'right';
  for (const v of niceTicks(0, layer.yMax, 5)) {
    const y = plot.top + plot.height - (v / layer.yMax) * plot.height;
    g.fillText(formatBytes(v), plot.left - 4, y + 4);
  }
  g.textAlign = 'left';
}

/** The x axis's labels for the window on screen, on a strip as wide as the canvas below the plot. */
export function drawXAxis(
  g: CanvasRenderingContext2D,
  plot: Plot,
  window: [number, number],
  axis: TimelineAxis,
  origin: number,
): void {
  const toPx = axisToPx(plot, window);
  g.fillStyle = '#333';
  g.font = AXIS_FONT;
  g.textAlign = 'center';
  for (const v of niceTicks(window[0], window[1], Math.max(2, Math.floor(plot.width / 110)))) {
    const label = axis === 'entry' ? String(v) : formatDuration(Math.round(v - origin));
    const x = toPx(v);
    // A label cut by the canvas edge reads as a different number.
    if (x + textWidth(AXIS_FONT, label) / 2 > plot.left + plot.width + MARGIN.right) continue;
    g.fillText(label, x, 15);
  }
}

/** The step markers' labels for the window on screen, on a strip along the plot's top. */
export function drawMarkerLabels(
  g: CanvasRenderingContext2D,
  plot: Plot,
  markers: MarkerSet,
  window: [number, number],
): void {
  drawMarkers(g, plot, markers, window, axisToPx(plot, window), 'labels');
}

const AXIS_FONT = '11px system-ui, sans-serif';
const MARKER_FONT = '10px system-ui, sans-serif';

let measurer: OffscreenCanvasRenderingContext2D | null = null;
/** Widths by font and text: a frame places the same labels (steps, ticks) as the one before. */
const widths = new Map<string, number>();

/**
 * Text width, measured off the page: a page canvas's measureText first brings the page's style
 * up to date, which in a frame that has just moved the layer cost ~1 ms (software, 2 cores).
 */
function textWidth(font: string, text: string): number {
  const key = `${font}\n${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    measurer ??= new OffscreenCanvas(1, 1).getContext('2d')!;
    measurer.font = font;
    w = measurer.measureText(text).width;
    widths.set(key, w);
  }
  return w;
}

/** A run's rectangle on screen: x, y, width, height (at least one pixel tall). */
function runBox(
  plot: Plot,
  layer: Layer,
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
  layer: Layer,
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
  layer: Layer,
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

/**
 * Step markers: 'lines' on the marks (they move with the layer), 'labels' on their strip (redrawn
 * each frame). Both place the labels the same way, so when markers are dense the lines drawn are
 * the labelled ones.
 */
function drawMarkers(
  g: CanvasRenderingContext2D,
  plot: Plot,
  markers: MarkerSet,
  window: [number, number],
  toPx: (x: number) => number,
  what: 'lines' | 'labels',
): void {
  g.fillStyle = '#555';
  g.font = MARKER_FONT;
  g.strokeStyle = 'rgba(0,0,0,0.35)';
  g.setLineDash([3, 3]);
  const [x0, x1] = window;
  const axisAt = (px: number): number => x0 + ((px - plot.left) / plot.width) * (x1 - x0);
  const right = plot.left + plot.width;
  const ranges = markers.groups.map((m) => [lowerBound(m.x, x0), lowerBound(m.x, x1 + 1e-9)] as const);
  const visible = ranges.reduce((n, [lo, hi]) => n + hi - lo, 0);
  // Dense markers would hide the plot: then only the labelled ones get a line.
  const dense = visible > plot.width / 12;
  const labels = new LabelRow(g, plot, what === 'labels');
  const line = (x: number): void => {
    if (what === 'labels') return;
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
    private readonly drawn: boolean,
  ) {
    this.taken = new Uint8Array(Math.ceil(plot.width) + 1);
  }

  /** Draws the label at x if its columns are free: PLACED, or the first taken column in its way. */
  place(name: string, x: number): number {
    const c = Math.floor(x - this.plot.left);
    if (this.taken[c] === 1) return c;
    const end = Math.min(this.taken.length, c + Math.ceil(textWidth(MARKER_FONT, name) + 8));
    for (let k = c; k < end; k++) if (this.taken[k] === 1) return k;
    if (this.drawn) this.g.fillText(name, x + 2, this.plot.top + 10);
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
