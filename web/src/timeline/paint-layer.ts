import type { TimelineLod } from '../../../src/engine/views/timeline/index.js';

/**
 * Paints a level of detail into a bitmap of plot size, in the engine worker: the page's frames
 * only stretch the bitmap into place, so neither a pan/zoom frame nor the arrival of a new level
 * of detail costs the page's thread work that grows with the runs (thousands at a whole 1 GB trace).
 */
export interface LayerSize {
  /** CSS pixels of the plot, and the screen's pixel ratio. */
  width: number;
  height: number;
  dpr: number;
}

const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#86bcb6',
  '#8cd17d',
  '#d4a6c8',
  '#a0cbe8',
  '#ffbe7d',
  '#f1ce63',
  '#d37295',
];

function paletteIndex(id: number): number {
  const i = (id * 7) % PALETTE.length;
  return i < 0 ? i + PALETTE.length : i;
}

/** Headroom above the highest point, so the reserved line at the top stays visible. */
export const Y_HEADROOM = 1.06;

/** The allocations' colours, by allocation id (a merged run: its largest member's). */
export function allocationTone(id: number): string {
  return PALETTE[paletteIndex(id)]!;
}

/**
 * The pools timeline's colours: allocations as in the allocation timeline, the free part of
 * group g's envelope (run code -2 - g, pool-envelopes.ts freePartCode) a pale wash of a hue of
 * its own.
 */
export function envelopeTone(code: number): string {
  return code <= -2 ? `${PALETTE[(-2 - code) % PALETTE.length]!}40` : allocationTone(code);
}

/**
 * One rectangle per run (neighbouring columns already merged), then the reserved line. `tone`
 * colours a run by its runTone (default: the allocations' palette).
 */
export function paintLayer(
  lod: TimelineLod,
  size: LayerSize,
  tone: (code: number) => string = allocationTone,
  envelopeTop?: Float64Array,
): ImageBitmap {
  const { layer, g, sx, sy } = plotCanvas(lod, size);
  const { height } = size;
  // One path and one fill per colour: a fill per run cost ~1 ms per thousand runs (software
  // raster), and runs never overlap, so the order they are filled in is free.
  const paths = new Map<string, Path2D>();
  for (let r = 0; r < lod.runs; r++) {
    const x = lod.runX0[r]! * sx;
    const w = (lod.runX1[r]! - lod.runX0[r]!) * sx;
    const y = height - lod.runY1[r]! * sy;
    const h = (lod.runY1[r]! - lod.runY0[r]!) * sy;
    const colour = tone(lod.runTone[r]!);
    let path = paths.get(colour);
    if (path === undefined) {
      path = new Path2D();
      paths.set(colour, path);
    }
    path.rect(x, y, w, h);
  }
  for (const [colour, path] of paths) {
    g.fillStyle = colour;
    g.fill(path);
  }
  if (envelopeTop !== undefined) drawEnvelopeTops(g, lod, envelopeTop, sx, sy, height);
  // The reserved line: what the caching allocator held from the driver.
  g.strokeStyle = '#222';
  g.lineWidth = 1.25;
  g.stroke(stepLine(lod.reserved, lod.columns, sx, sy, height));
  return layer.transferToImageBitmap();
}

/** The tone of active memory in an outline, before its allocations are stacked. */
export const OUTLINE_TONE = '#c9ced6';

/**
 * An outline (timelineOutline: no runs) as the first picture of a timeline: active memory as one
 * grey area, then the reserved line, on the same scale as the stacked layer that replaces it.
 */
export function paintOutline(lod: TimelineLod, size: LayerSize): ImageBitmap {
  const { layer, g, sx, sy } = plotCanvas(lod, size);
  const { width, height } = size;
  const area = stepLine(lod.active, lod.columns, sx, sy, height);
  area.lineTo(width, height);
  area.lineTo(0, height);
  area.closePath();
  g.fillStyle = OUTLINE_TONE;
  g.fill(area);
  g.strokeStyle = '#222';
  g.lineWidth = 1.25;
  g.stroke(stepLine(lod.reserved, lod.columns, sx, sy, height));
  return layer.transferToImageBitmap();
}

/** A bitmap canvas of the plot's size in device pixels, drawn on in CSS pixels; x and y per column and byte. */
function plotCanvas(lod: TimelineLod, size: LayerSize) {
  const { width, height, dpr } = size;
  const layer = new OffscreenCanvas(
    Math.max(1, Math.round(width * dpr)),
    Math.max(1, Math.round(height * dpr)),
  );
  const g = layer.getContext('2d')!;
  g.scale(dpr, dpr);
  return { layer, g, sx: width / lod.columns, sy: height / (lod.yMax * Y_HEADROOM) };
}

/** Bytes per column as a step line across the plot (each column flat over its width). */
function stepLine(bytes: Float64Array, columns: number, sx: number, sy: number, height: number): Path2D {
  const path = new Path2D();
  for (let c = 0; c < columns; c++) {
    const y = height - bytes[c]! * sy;
    if (c === 0) path.moveTo(0, y);
    else path.lineTo(c * sx, y);
    path.lineTo((c + 1) * sx, y);
  }
  return path;
}

/**
 * The pools timeline's envelope edges: each group's top as a step line in its colour, so an
 * envelope stays visible where its allocations fill it (see PoolTimelineLod.envelopeTop).
 */
function drawEnvelopeTops(
  g: OffscreenCanvasRenderingContext2D,
  lod: TimelineLod,
  tops: Float64Array,
  sx: number,
  sy: number,
  height: number,
): void {
  g.lineWidth = 1;
  for (let group = 0; group * lod.columns < tops.length; group++) {
    // A group left out (another stream's) has no envelope to edge.
    if (Number.isNaN(tops[group * lod.columns])) continue;
    g.strokeStyle = PALETTE[group % PALETTE.length]!;
    g.beginPath();
    for (let c = 0; c < lod.columns; c++) {
      const y = Math.round(height - tops[group * lod.columns + c]! * sy) + 0.5;
      if (c === 0) g.moveTo(0, y);
      else g.lineTo(c * sx, y);
      g.lineTo((c + 1) * sx, y);
    }
    g.stroke();
  }
}
