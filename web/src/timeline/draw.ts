import { formatCount, formatDuration } from '../../../src/engine/base/index.js';
import { lowerBound } from '../../../src/engine/model/index.js';
import type { PoolGroup } from '../../../src/engine/views/pools/index.js';
import type {
  OomMark,
  StepMarker,
  TimelineAxis,
  TimelineLod,
} from '../../../src/engine/views/timeline/index.js';
import { byteTicks, decimalTicks } from '../../../src/engine/views/timeline/index.js';
import { formatBytes } from '../format.js';
import { allocationTone } from './paint-layer.js';

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

/** Search matches' fill: magenta, far from every colour of the allocations' palette (paint-layer.ts). */
export const MATCH_FILL = '#ff00ff';
/** Their edge, where a run is tall enough to keep its fill: a darker magenta, which no palette colour is either. */
const MATCH_EDGE = '#8e008e';
/** The OOM marker's colour (the cursor is #d00; an OOM must not read as the selection). */
export const OOM_COLOUR = '#b00020';

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
  /** The outline sent ahead of the answer (timelineOutline): no runs, nothing to pick yet. */
  outline?: boolean;
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
  for (const v of byteTicks(layer.yMax, 5)) {
    const y = plot.top + plot.height - (v / layer.yMax) * plot.height;
    // "32 GiB", not "32.0 GiB": a tick is a round number.
    g.fillText(formatBytes(v).replace(/\.0+ /, ' '), plot.left - 4, y + 4);
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
  const count = Math.max(2, Math.floor(plot.width / 110));
  // Time ticks are round times since the trace start (the labels), not round epoch µs.
  const at = axis === 'entry' ? 0 : origin;
  for (const since of decimalTicks(window[0] - at, window[1] - at, count, axis === 'entry')) {
    const label = axis === 'entry' ? formatCount(since) : formatDuration(Math.round(since));
    const x = toPx(since + at);
    // A label cut by the canvas edge reads as a different number.
    if (x + textWidth(AXIS_FONT, label) / 2 > plot.left + plot.width + MARGIN.right) continue;
    g.fillText(label, x, 15);
  }
}

/**
 * The step markers' labels for the window on screen, on a strip along the plot's top; returns
 * where their backings were drawn ("x0:x1" each).
 */
export function drawMarkerLabels(
  g: CanvasRenderingContext2D,
  plot: Plot,
  markers: MarkerSet,
  window: [number, number],
): string[] {
  return drawMarkers(g, plot, markers, window, axisToPx(plot, window), 'labels');
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
 * Search matches, flagged per allocation id: the rest of the layer is dimmed and their runs are
 * drawn in MATCH_FILL, a colour no allocation's palette colour is (a yellow wash read as one more
 * yellow allocation). A run of merged sub-pixel allocations is marked when the allocation that
 * gives it its colour matches.
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
  g.fillStyle = 'rgba(255, 255, 255, 0.7)';
  g.fillRect(plot.left, plot.top, plot.width, plot.height);
  g.fillStyle = MATCH_FILL;
  g.strokeStyle = MATCH_EDGE;
  g.lineWidth = 1;
  for (let r = 0; r < lod.runs; r++) {
    const id = lod.runAlloc[r]! >= 0 ? lod.runAlloc[r]! : lod.runTone[r]!;
    if (matches[id] !== 1) continue;
    const b = box(r);
    g.fillRect(...b);
    // An edge only where it leaves the fill visible: on a run a few pixels tall it was all edge.
    if (b[3] >= 5 && b[2] >= 5) g.strokeRect(b[0] + 0.5, b[1] + 0.5, b[2] - 1, b[3] - 1);
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
  // Its runs ringed as one shape: black, then white, then the allocation's own colour again, so a
  // run a few pixels tall (or a slope of one-column runs) keeps its colour inside the ring instead
  // of turning into a black band.
  const box = runBox(plot, layer, toPx);
  const boxes: [number, number, number, number][] = [];
  for (let r = 0; r < lod.runs; r++) if (lod.runAlloc[r] === sel.alloc) boxes.push(box(r));
  const grown = (by: number) =>
    boxes.map(([x, y, w, h]) => [x - by, y - by, w + 2 * by, h + 2 * by] as const);
  g.fillStyle = '#000';
  for (const b of grown(3)) g.fillRect(...b);
  g.fillStyle = '#fff';
  for (const b of grown(1)) g.fillRect(...b);
  g.fillStyle = allocationTone(sel.alloc);
  for (const b of boxes) g.fillRect(...b);
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
    // Visible even when the allocation is under a pixel tall and merged at this zoom; an outline
    // (black outside, white inside), never a fill: a filled box hid the allocation it marked.
    const x = Math.round(toPx(cursor)) + 0.5;
    const top = Math.round(yPx(sel.y1)) - 2.5;
    const h = Math.max(4, Math.round((sel.y1 - sel.y0) * sy) + 4);
    outline(g, [x - 6, top, 12, h]);
  }
}

/** A box drawn as a black and white double line, seen on every palette colour and on white. */
function outline(g: CanvasRenderingContext2D, [x, y, w, h]: [number, number, number, number]): void {
  g.lineWidth = 2;
  g.strokeStyle = '#000';
  g.strokeRect(x, y, w, h);
  g.lineWidth = 1;
  g.strokeStyle = '#fff';
  g.strokeRect(x + 1.5, y + 1.5, Math.max(0, w - 3), Math.max(0, h - 3));
}

/**
 * Marker starts by x, step markers first (they get their labels first), prepared once per
 * marker list: a frame only binary-searches the visible ones instead of filtering thousands.
 */
export interface MarkerSet {
  groups: { x: Float64Array; name: string[] }[];
  /** The OOM entries and their x: labelled before any step, in their own colour. */
  ooms: { x: Float64Array; entry: number[] };
}

export function prepareMarkers(markers: StepMarker[], ooms: OomMark[] = []): MarkerSet {
  const starts = markers.filter((m) => m.stage === 'START' || m.stage === '').sort((a, b) => a.x - b.x);
  const group = (ms: StepMarker[]) => ({ x: Float64Array.from(ms, (m) => m.x), name: ms.map((m) => m.name) });
  return {
    groups: [group(starts.filter(isStep)), group(starts.filter((m) => !isStep(m)))],
    ooms: { x: Float64Array.from(ooms, (m) => m.x), entry: ooms.map((m) => m.entry) },
  };
}

/** The OOM markers: a solid line across the plot and an 'OOM' label, claimed before any step label. */
function drawOoms(
  g: CanvasRenderingContext2D,
  plot: Plot,
  markers: MarkerSet,
  toPx: (x: number) => number,
  labels: LabelRow,
  what: 'lines' | 'labels',
): void {
  const { x: at } = markers.ooms;
  g.save();
  g.setLineDash([]);
  g.strokeStyle = OOM_COLOUR;
  g.fillStyle = OOM_COLOUR;
  g.lineWidth = 2;
  g.font = `bold ${MARKER_FONT}`;
  for (let i = 0; i < at.length; i++) {
    const x = Math.round(toPx(at[i]!));
    if (x < plot.left - 1 || x > plot.left + plot.width + 1) continue;
    labels.place('OOM', Math.min(x, plot.left + plot.width - oomLabelWidth()), `bold ${MARKER_FONT}`);
    if (what === 'labels') continue;
    g.beginPath();
    g.moveTo(x, plot.top);
    g.lineTo(x, plot.top + plot.height);
    g.stroke();
  }
  g.restore();
}

function oomLabelWidth(): number {
  return textWidth(`bold ${MARKER_FONT}`, 'OOM') + 4;
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
): string[] {
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
  drawOoms(g, plot, markers, toPx, labels, what);
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
  return labels.boxes;
}

const PLACED = -2;
const LABEL_BACKING = 'rgba(255, 255, 255, 0.92)';
/** Height of a label's backing, from the strip's top. */
const LABEL_BOX = 13;
const CUT = -3;

/** The labels along the plot's top: pixel columns taken by a placed label (labels never overlap). */
class LabelRow {
  private readonly taken: Uint8Array;
  /** The drawn labels' backings, "x0:x1" (CSS px from the strip's left), for tests. */
  readonly boxes: string[] = [];
  constructor(
    private readonly g: CanvasRenderingContext2D,
    private readonly plot: Plot,
    private readonly drawn: boolean,
  ) {
    this.taken = new Uint8Array(Math.ceil(plot.width) + 1);
  }

  /**
   * Draws the label at x if its columns are free: PLACED, or the first taken column in its way, or
   * CUT when the label would run past the plot's right edge (a cut label reads as another name).
   */
  place(name: string, x: number, font = MARKER_FONT): number {
    const c = Math.floor(x - this.plot.left);
    if (this.taken[c] === 1) return c;
    const end = c + Math.ceil(textWidth(font, name) + 8);
    if (end > this.taken.length + 6) return CUT;
    for (let k = c; k < Math.min(end, this.taken.length); k++) if (this.taken[k] === 1) return k;
    if (this.drawn) {
      // On a backing of its own: the dashed lines of nearby markers whose labels did not fit ran
      // through the text and made two names read as one.
      const text = this.g.fillStyle;
      this.g.fillStyle = LABEL_BACKING;
      this.g.fillRect(x + 1, this.plot.top, textWidth(font, name) + 3, LABEL_BOX);
      this.g.fillStyle = text;
      this.g.fillText(name, x + 2, this.plot.top + 10);
      this.boxes.push(`${x + 1}:${x + 4 + textWidth(font, name)}`);
    }
    this.taken.fill(1, c, Math.min(end, this.taken.length));
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
