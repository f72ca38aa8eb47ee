import { useEffect, useRef, useState } from 'react';
import type { StepMarker, TimelineAxis } from '../../../src/engine/analyses/timeline-axis.js';
import type { TimelineLod } from '../../../src/engine/analyses/timeline-lod.js';
import { exactBytes, formatBytes } from '../format.js';
import { sizedContext, useMeasuredWidth } from './canvas.js';
import { drawFrame, MARGIN, type Plot, paintLayer, type Selection, Y_HEADROOM } from './draw.js';
import type { WindowProps } from './minimap.js';

interface Props extends WindowProps {
  /** x of the selected entry on the axis, and the pinned allocation. */
  cursor: number | null;
  selection: Selection | null;
  /** Search matches by allocation id (1 = match), and the term (the worker colours merged runs by it). */
  matches?: Uint8Array | null;
  search?: string;
  onPick: (entry: number, alloc: number) => void;
}

const HEIGHT = 320;

interface Layer {
  lod: TimelineLod;
  canvas: HTMLCanvasElement;
  window: [number, number];
  yMax: number;
}

/**
 * Active memory over time, every allocation stacked as memory_viz stacks them, reserved memory
 * as a line. The worker computes what each pixel column shows; wheel zooms, drag pans, a click
 * picks the exact allocation under the pointer.
 */
export function Timeline(p: Props) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const measured = useMeasuredWidth(canvasRef);
  const width = measured ?? 800;
  const [layer, setLayer] = useState<Layer | null>(null);
  const [markers, setMarkers] = useState<StepMarker[]>([]);
  const [hover, setHover] = useState<string>('');
  const plot: Plot = {
    left: MARGIN.left,
    top: MARGIN.top,
    width: Math.max(10, width - MARGIN.left - MARGIN.right),
    height: HEIGHT - MARGIN.top - MARGIN.bottom,
  };
  const windowKey = `${p.window[0]}:${p.window[1]}`;

  useEffect(() => {
    p.client.query('markers', { device: p.device.device, axis: p.axis }).then(setMarkers);
  }, [p.client, p.device.device, p.axis]);

  // Latest window wins: while the worker computes, frames stretch the previous layer.
  useLatest(
    () =>
      p.client.query('timeline', {
        device: p.device.device,
        request: { axis: p.axis, x0: p.window[0], x1: p.window[1], columns: plot.width, rows: plot.height },
        stream: p.stream ?? null,
        search: p.search ?? '',
      }),
    (lod, req) => {
      const w: [number, number] = [req.x0, req.x1];
      setLayer({
        lod,
        canvas: paintLayer(lod, plot, devicePixelRatio),
        window: w,
        yMax: lod.yMax * Y_HEADROOM,
      });
    },
    `${p.device.device}:${p.axis}:${windowKey}:${plot.width}:${p.stream ?? ''}:${p.search ?? ''}`,
    { x0: p.window[0], x1: p.window[1] },
    measured !== null,
  );

  useEffect(() => {
    const g = sizedContext(canvasRef.current!, width, HEIGHT);
    drawFrame(g, plot, {
      window: p.window,
      axis: p.axis,
      layer,
      markers,
      cursor: p.cursor,
      selection: p.selection,
      matches: p.matches ?? null,
      origin: p.device.extent.time[0],
    });
  });

  const { zoom, ...gestures } = useGestures(p, plot, layer, setHover);
  const zoomRef = useRef(zoom);
  zoomRef.current = zoom;
  useEffect(() => {
    // React's wheel listener is passive; the page must not scroll while the plot zooms.
    const c = canvasRef.current!;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      zoomRef.current(Math.exp(e.deltaY * 0.0015), e.clientX - c.getBoundingClientRect().left);
    };
    c.addEventListener('wheel', onWheel, { passive: false });
    return () => c.removeEventListener('wheel', onWheel);
  }, []);
  return (
    <div className="timeline">
      <canvas
        ref={canvasRef}
        style={{ width: '100%', height: HEIGHT }}
        tabIndex={0}
        aria-label="active memory timeline"
        data-ready={layer !== null && layer.window[0] === p.window[0] && layer.window[1] === p.window[1]}
        {...gestures}
      />
      <div className="hover" aria-live="off">
        {hover || 'wheel: zoom · drag: pan · click: pin an allocation · +/−/0 on the focused plot'}
      </div>
    </div>
  );
}

/**
 * Runs `query` for the latest key only, one at a time: while one runs, newer keys (a wheel
 * spin, a drag) only replace the pending one, so the worker never works through a backlog of
 * windows nobody looks at any more. Answers for superseded keys are dropped.
 */
function useLatest<T, R>(
  query: () => Promise<T>,
  apply: (t: T, req: R) => void,
  key: string,
  req: R,
  /** false: nothing is queried yet (the plot's width is not known). */
  enabled: boolean,
): void {
  const latest = useRef({ key, query, apply, req, busy: false });
  Object.assign(latest.current, { key, query, apply, req });
  // biome-ignore lint/correctness/useExhaustiveDependencies: the key names everything the query reads
  useEffect(() => {
    const l = latest.current;
    if (!enabled) return;
    if (l.busy) return; // the running query starts the latest key when it ends
    const run = (): void => {
      const { key: k, query: q, req: r } = l;
      l.busy = true;
      q().then(
        (t) => {
          l.busy = false;
          if (l.key === k) l.apply(t, r);
          else run();
        },
        () => {
          l.busy = false;
        },
      );
    };
    run();
  }, [key, enabled]);
}

function useGestures(p: Props, plot: Plot, layer: Layer | null, setHover: (s: string) => void) {
  const drag = useRef<{ x: number; window: [number, number]; moved: boolean } | null>(null);
  const xOf = (e: React.MouseEvent) =>
    e.clientX - (e.currentTarget as HTMLElement).getBoundingClientRect().left;
  const yOf = (e: React.MouseEvent) =>
    e.clientY - (e.currentTarget as HTMLElement).getBoundingClientRect().top;
  const clamp = (w: [number, number]): [number, number] => clampWindow(w, p.device.extent[p.axis], p.axis);
  const zoom = (factor: number, atPx: number) => {
    const [x0, x1] = p.window;
    const at = x0 + ((atPx - plot.left) / plot.width) * (x1 - x0);
    p.onWindow(clamp([at - (at - x0) * factor, at + (x1 - at) * factor]));
  };
  return {
    zoom,
    onMouseDown: (e: React.MouseEvent) => {
      drag.current = { x: e.clientX, window: p.window, moved: false };
    },
    onMouseMove: (e: React.MouseEvent) => {
      const d = drag.current;
      if (d && e.buttons === 1) {
        const dx = e.clientX - d.x;
        if (Math.abs(dx) > 3) d.moved = true;
        const shift = (-dx / plot.width) * (d.window[1] - d.window[0]);
        p.onWindow(clamp([d.window[0] + shift, d.window[1] + shift]));
        return;
      }
      setHover(describeAt(layer, plot, xOf(e), yOf(e)));
    },
    onMouseUp: (e: React.MouseEvent) => {
      const d = drag.current;
      drag.current = null;
      if (d?.moved || !layer) return;
      const hit = columnAt(layer, plot, xOf(e), yOf(e));
      if (hit === null) return;
      p.client
        .query('pick', {
          device: p.device.device,
          entry: hit.entry,
          bytes: hit.bytes,
          stream: p.stream ?? null,
        })
        .then((alloc) => {
          p.onPick(hit.entry, alloc);
        });
    },
    onKeyDown: (e: React.KeyboardEvent) => {
      const mid = plot.left + plot.width / 2;
      if (e.key === '+' || e.key === '=') zoom(0.5, mid);
      else if (e.key === '-') zoom(2, mid);
      else if (e.key === '0') p.onWindow(p.device.extent[p.axis]);
    },
  };
}

function columnAt(
  layer: Layer,
  plot: Plot,
  x: number,
  y: number,
): { entry: number; bytes: number; column: number } | null {
  const column = Math.floor(((x - plot.left) / plot.width) * layer.lod.columns);
  if (column < 0 || column >= layer.lod.columns || y < plot.top || y > plot.top + plot.height) return null;
  const bytes = ((plot.top + plot.height - y) / plot.height) * layer.yMax;
  return { entry: layer.lod.sample[column]!, bytes, column };
}

function describeAt(layer: Layer | null, plot: Plot, x: number, y: number): string {
  if (!layer) return '';
  const hit = columnAt(layer, plot, x, y);
  if (hit === null) return '';
  const lod = layer.lod;
  const active = lod.active[hit.column]!;
  let under = '';
  for (let r = 0; r < lod.runs; r++) {
    if (lod.runX0[r]! > hit.column || lod.runX1[r]! <= hit.column) continue;
    if (hit.bytes < lod.runY0[r]! || hit.bytes >= lod.runY1[r]!) continue;
    const bytes = lod.runY1[r]! - lod.runY0[r]!;
    under =
      lod.runAlloc[r]! >= 0
        ? ` · allocation #${lod.runAlloc[r]}: ${formatBytes(bytes)} (${exactBytes(bytes)})`
        : ` · ${lod.runCount[r]} allocations under a pixel tall: ${formatBytes(bytes)} in all (click picks the exact one)`;
  }
  return `after entry ${hit.entry}: active ${formatBytes(active)} (${exactBytes(active)}), reserved ${formatBytes(lod.reserved[hit.column]!)}${under}`;
}

/** Keeps the window inside the trace and at least a few entries (or microseconds) wide. */
export function clampWindow(
  [a, b]: [number, number],
  [lo, hi]: [number, number],
  axis: TimelineAxis,
): [number, number] {
  const min = axis === 'entry' ? 4 : 2;
  let w = Math.min(Math.max(b - a, min), hi - lo);
  if (!(w > 0)) w = hi - lo;
  let x0 = Math.max(lo, Math.min(a, hi - w));
  if (!Number.isFinite(x0)) x0 = lo;
  return [x0, x0 + w];
}
