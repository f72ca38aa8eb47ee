import type { Page } from 'playwright-core';

/** A colour as channel ranges, inclusive: what a probe of the timeline's layer canvas looks for. */
export type ColourRange = { r: [number, number]; g: [number, number]; b: [number, number] };

/** The pinned allocation's outline (#000). */
export const BLACK: ColourRange = { r: [0, 0], g: [0, 0], b: [0, 0] };
/** Search matches (#ff00ff), which no palette colour is. */
export const MAGENTA: ColourRange = { r: [240, 255], g: [0, 16], b: [240, 255] };
/** The OOM marker (#b00020). */
export const OOM_RED: ColourRange = { r: [160, 196], g: [0, 16], b: [16, 48] };

/** What the probe reads of the layer canvas (the tests are type-checked without the DOM's types). */
interface LayerCanvas {
  width: number;
  height: number;
  getBoundingClientRect(): { left: number; top: number; width: number; height: number };
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  } | null;
}

/**
 * Page points (client px) of the timeline layer canvas's pixels of a colour, probed in a box
 * around (x, y) or everywhere.
 */
export function layerPixels(
  page: Page,
  colour: ColourRange,
  around?: { x: number; y: number; dx: number; dy: number },
): Promise<{ x: number; y: number }[]> {
  return page.locator('.plot-moving canvas').evaluate(
    (canvas, [c0, around]) => {
      const c = canvas as unknown as LayerCanvas;
      const r = c.getBoundingClientRect();
      const sx = c.width / r.width;
      const sy = c.height / r.height;
      const x0 = around ? Math.max(0, Math.floor((around.x - around.dx - r.left) * sx)) : 0;
      const x1 = around ? Math.min(c.width, Math.ceil((around.x + around.dx - r.left) * sx)) : c.width;
      const y0 = around ? Math.max(0, Math.floor((around.y - around.dy - r.top) * sy)) : 0;
      const y1 = around ? Math.min(c.height, Math.ceil((around.y + around.dy - r.top) * sy)) : c.height;
      const data = c.getContext('2d')!.getImageData(x0, y0, x1 - x0, y1 - y0).data;
      const within = (v: number, [lo, hi]: [number, number]) => v >= lo && v <= hi;
      const found: { x: number; y: number }[] = [];
      for (let i = 0; i < data.length; i += 4) {
        if (!within(data[i]!, c0.r) || !within(data[i + 1]!, c0.g) || !within(data[i + 2]!, c0.b)) continue;
        const p = i / 4;
        found.push({
          x: r.left + (x0 + (p % (x1 - x0)) + 0.5) / sx,
          y: r.top + (y0 + Math.floor(p / (x1 - x0)) + 0.5) / sy,
        });
      }
      return found;
    },
    [colour, around ?? null] as const,
  );
}
