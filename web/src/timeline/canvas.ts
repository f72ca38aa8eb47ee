import { type RefObject, useEffect, useState } from 'react';

/** The CSS width of an element's parent, followed as the page resizes. */
export function useParentWidth(ref: RefObject<HTMLElement | null>, initial = 800): number {
  return useMeasuredWidth(ref) ?? initial;
}

/**
 * The same, null until first measured: views that query the worker for their width wait for it,
 * or their first query (a whole-trace LOD: ~0.7 s on a 1 GB file) is for a width nobody sees.
 */
export function useMeasuredWidth(ref: RefObject<HTMLElement | null>): number | null {
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    const el = ref.current!.parentElement!;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}

/**
 * Sizes a canvas for the screen's pixel ratio and returns a context drawing in CSS pixels.
 * `options` count only on a canvas's first call (an opaque canvas stays opaque).
 */
export function sizedContext(
  c: HTMLCanvasElement,
  width: number,
  height: number,
  options?: CanvasRenderingContext2DSettings,
): CanvasRenderingContext2D {
  const dpr = devicePixelRatio;
  const w = Math.round(width * dpr);
  const h = Math.round(height * dpr);
  const g = c.getContext('2d', options)!;
  // Setting a canvas's size reallocates its bitmap even when unchanged: only on a resize. Either
  // way the caller gets a cleared canvas in the default state (reset(), where the browser has it).
  if (c.width !== w || c.height !== h) {
    c.width = w;
    c.height = h;
  } else if (typeof g.reset === 'function') {
    g.reset();
  } else {
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, w, h);
  }
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  return g;
}

/**
 * A canvas redrawn every frame of a gesture: sized as sizedContext does, but cleared without
 * resetting its state, so the font it keeps is not parsed again (parsing a page canvas's font
 * brings the page's style up to date: ~1 ms in a frame that has just moved a layer), and with its
 * text direction fixed (the default, inherit, reads the canvas's computed style).
 */
export function frameContext(c: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const dpr = devicePixelRatio;
  const w = Math.round(width * dpr);
  const h = Math.round(height * dpr);
  const g = c.getContext('2d')!;
  if (c.width !== w || c.height !== h) {
    c.width = w;
    c.height = h;
  }
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.clearRect(0, 0, w, h);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  if (g.direction !== 'ltr') g.direction = 'ltr';
  return g;
}
