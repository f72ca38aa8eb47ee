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

/** Sizes a canvas for the screen's pixel ratio and returns a context drawing in CSS pixels. */
export function sizedContext(c: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const dpr = devicePixelRatio;
  c.width = Math.round(width * dpr);
  c.height = Math.round(height * dpr);
  const g = c.getContext('2d')!;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  return g;
}
