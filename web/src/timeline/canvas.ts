import { type RefObject, useEffect, useState } from 'react';

/** The CSS width of an element's parent, followed as the page resizes. */
export function useParentWidth(ref: RefObject<HTMLElement | null>, initial = 800): number {
  const [width, setWidth] = useState(initial);
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
