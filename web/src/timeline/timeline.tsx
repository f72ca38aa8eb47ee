import { useEffect, useRef, useState } from 'react';
import { formatDuration, formatStream } from '../../../src/engine/base/index.js';
import { freePartGroup, type PoolGroup } from '../../../src/engine/views/pools/index.js';
import type { HoverFacts, TimelineAxis, TimelineLod } from '../../../src/engine/views/timeline/index.js';
import { exactBytes, formatBytes, formatCount } from '../format.js';
import type { TimelineStack, ZoomMode } from '../url-state.js';
import { frameContext, sizedContext, useMeasuredWidth } from './canvas.js';
import {
  drawMarkerLabels,
  drawXAxis,
  drawYAxis,
  type Layer,
  MARGIN,
  type MarkerSet,
  type Plot,
  paintShownLayer,
  prepareMarkers,
  type Selection,
} from './draw.js';
import { frameScheduler } from './frame-scheduler.js';
import { latestQuery } from './latest-query.js';
import { layerTransform } from './layer-transform.js';
import type { WindowProps } from './minimap.js';
import { Y_HEADROOM } from './paint-layer.js';
import { PoolLegend } from './pool-legend.js';

interface Props extends WindowProps {
  /** x of the selected entry on the axis, and the pinned allocation. */
  cursor: number | null;
  selection: Selection | null;
  /** Search matches by allocation id (1 = match), and the term (the worker colours merged runs by it). */
  matches?: Uint8Array | null;
  search?: string;
  /**
   * What is stacked: allocations (active memory), segments (reserved memory) or pools (reserved
   * memory per pool and stream, allocations inside). With segments, the pinned allocation and
   * search matches are not drawn (runs name pieces of reserved memory), and the stream filter does
   * not apply (a segment's memory is the device's).
   */
  stack: TimelineStack;
  /**
   * proportional: each level of detail's y axis reaches the window's highest point (as the
   * minimap's brush always did); horizontal: it keeps the whole trace's, so zooming only
   * stretches time. A pan/zoom frame is the same transform either way.
   */
  zoom: ZoomMode;
  /** Shift+↑/↓ zoom horizontally, Ctrl+↑/↓ proportionally (MindStudio Insight's keys): the mode follows. */
  onZoomMode: (mode: ZoomMode) => void;
  /** A click at `bytes` (of the stack drawn) after `entry`: the page picks what lies there. */
  onPick: (entry: number, bytes: number) => void;
  /** A click on an OOM marker: the page selects that entry. */
  onEntry: (entry: number) => void;
  /** Called when a level of detail has been drawn (or could not be computed). */
  onLayer?: () => void;
}

const HEIGHT = 320;
/**
 * How long the window must stay still before its level of detail is asked for: 80 ms, or half
 * what the last one cost the worker, up to 400 ms. A wheel spin pauses between notches; a whole
 * 1 GB trace's level of detail (0.5-0.9 s) started in such a pause was thrown away by the next
 * notch and held one of the 2 cores through the gesture (3 in a 2.4 s spin: frames p95 up to
 * 79 ms). A cheap one (a zoomed window: tens of ms) still comes 80 ms after the window stops.
 */
function stillMs(lastCostMs: number): number {
  return Math.min(400, Math.max(80, lastCostMs / 2));
}

/**
 * Active memory over time, every allocation stacked as memory_viz stacks them, reserved memory
 * as a line. The worker computes and paints what each pixel column shows; wheel zooms, drag pans,
 * a click picks the exact allocation under the pointer. A pan or zoom frame touches no React
 * state: it moves the live window, and in the next animation frame the layer and its marks move
 * by a CSS transform (composited, not repainted or re-uploaded) while only the thin strips of axis
 * and marker labels are redrawn. The rest is repainted when a layer, the selection or the markers
 * change.
 */
export function Timeline(p: Props) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const parts = useRef<Parts>({ moving: null, layer: null, yAxis: null, labels: null, xAxis: null });
  const hoverRef = useRef<HTMLDivElement>(null);
  const measured = useMeasuredWidth(canvasRef);
  const width = measured ?? 800;
  const [markers, setMarkers] = useState<MarkerSet>(NO_MARKERS);
  const plot: Plot = {
    left: MARGIN.left,
    top: MARGIN.top,
    width: Math.max(10, width - MARGIN.left - MARGIN.right),
    height: HEIGHT - MARGIN.top - MARGIN.bottom,
  };
  const layerRef = useRef<Layer | null>(null);
  /** The query of the layer last asked for: the canvas is ready once it shows that one. */
  const wantedKey = useRef('');
  const props = useRef(p);
  props.current = p;
  const frame = useRef({ plot, markers, width });
  frame.current = { plot, markers, width };

  // Markers come after the first level of detail: placing them (~0.15 s on a 1 GB trace) must not
  // hold up the first paint in the one worker.
  const [drawnOnce, setDrawnOnce] = useState(false);
  useEffect(() => {
    if (!drawnOnce) return;
    const args = { device: p.device.device, axis: p.axis };
    Promise.all([p.client.query('markers', args), p.client.query('ooms', args)]).then(([m, ooms]) =>
      setMarkers(prepareMarkers(m, ooms)),
    );
  }, [p.client, p.device.device, p.axis, drawnOnce]);

  // What was last painted: a frame repaints the layer and the y axis only when what they show changed.
  const painted = useRef<{ layer: unknown[]; yAxis: unknown[] }>({ layer: [], yAxis: [] });
  const [draw] = useState(() =>
    frameScheduler(() => {
      const c = canvasRef.current;
      const el = parts.current;
      if (c === null || el.moving === null) return;
      const { plot, markers, width } = frame.current;
      const q = props.current;
      const window = q.live.get();
      const layer = layerRef.current;
      const last = painted.current;
      const yAxis = [layer?.yMax];
      if (changed(last.yAxis, yAxis)) {
        drawYAxis(sizedContext(el.yAxis!, MARGIN.left, HEIGHT), plot, layer);
        last.yAxis = yAxis;
      }
      // Selection and search marks name allocations: the segments stack has none to mark.
      const byAllocation = q.stack !== 'segments';
      const sel = byAllocation ? q.selection : null;
      const matches = byAllocation ? (q.matches ?? null) : null;
      const selKey = sel && `${sel.alloc}:${sel.x0}:${sel.x1}:${sel.y0}:${sel.y1}`;
      const shown = [layer, markers, q.cursor, selKey, matches, plot.width, plot.height];
      if (layer !== null && changed(last.layer, shown)) {
        // Opaque: the compositor need not blend what lies under it.
        const g = sizedContext(el.layer!, plot.width, plot.height, { alpha: false });
        paintShownLayer(
          g,
          { left: 0, top: 0, width: plot.width, height: plot.height },
          {
            layer,
            markers,
            cursor: q.cursor,
            selection: sel,
            matches,
          },
        );
        last.layer = shown;
        // Where the pinned allocation is marked (bytes of the stack drawn), for tests.
        c.dataset.selection = sel ? `${sel.alloc}:${sel.y0}:${sel.y1}` : '';
      }
      // Every frame: the labels follow the window, then the layer and its marks move (canvases
      // first: their text needs the page's style, which moving the layer makes dirty).
      const strip = { left: 0, top: 0, width: plot.width, height: LABELS_HEIGHT };
      const boxes = drawMarkerLabels(
        frameContext(el.labels!, plot.width, LABELS_HEIGHT),
        strip,
        markers,
        window,
      );
      // Where the labels' backings lie, for tests (written only when it changes: a DOM write).
      const placed = boxes.join(' ');
      if (el.labels!.dataset.labels !== placed) el.labels!.dataset.labels = placed;
      drawXAxis(frameContext(el.xAxis!, width, MARGIN.bottom), plot, window, q.axis, q.device.extent.time[0]);
      const transform = layer === null ? null : layerTransform(plot.width, layer.window, window);
      const visibility = transform === null ? 'hidden' : 'visible';
      if (el.moving.style.visibility !== visibility) el.moving.style.visibility = visibility;
      if (transform !== null) el.moving.style.transform = transform;
      // What the canvas shows, for tests and the benchmark: the window drawn, and whether the
      // worker's answer for exactly that window is in it.
      c.dataset.window = `${window[0]}:${window[1]}`;
      if (layer !== null) {
        c.dataset.yTop = String(layer.lod.yMax);
        // Bytes at the plot's top edge (the level of detail's top plus headroom).
        c.dataset.yAxisTop = String(layer.yMax);
      }
      // 'outline': the answer's first part (the shape of memory, nothing stacked yet) is on show.
      const exact =
        layer !== null &&
        layer.key === wantedKey.current &&
        layer.window[0] === window[0] &&
        layer.window[1] === window[1];
      c.dataset.ready = exact && layer.outline ? 'outline' : String(exact);
    }),
  );

  // The pools timeline's groups, for its legend (a new array only when they change).
  const [groups, setGroups] = useState<PoolGroup[]>([]);
  const [request] = useState(() =>
    latestQuery<Layer>(
      (layer) => {
        layerRef.current = layer;
        const found = layer.lod.groups ?? [];
        setGroups((was) => (JSON.stringify(was) === JSON.stringify(found) ? was : found));
        draw();
        setDrawnOnce(true);
        props.current.onLayer?.();
      },
      () => {
        setDrawnOnce(true);
        props.current.onLayer?.();
      },
    ),
  );
  // Asks the worker for the live window's level of detail (latest wins), painted at plot size.
  const requestLayer = (): void => {
    const q = props.current;
    const { plot } = frame.current;
    const [x0, x1] = q.live.get();
    const args = {
      device: q.device.device,
      request: { axis: q.axis, x0, x1, columns: plot.width, rows: plot.height },
      paint: { width: plot.width, height: plot.height, dpr: devicePixelRatio },
      ...(q.stack === 'segments' ? {} : { stream: q.stream ?? null, search: q.search ?? '' }),
      ...(q.stack === 'allocations' ? {} : { stack: q.stack }),
      zoom: q.zoom,
    };
    const key = JSON.stringify(args);
    wantedKey.current = key;
    request(key, () => {
      const sent = performance.now();
      // Nothing on show yet: the worker sends the outline first, drawn until the stacked answer.
      const outline = layerRef.current === null;
      const showOutline = ({ bitmap, ...lod }: TimelineLod & { bitmap: ImageBitmap }) => {
        if (wantedKey.current !== key || (layerRef.current !== null && !layerRef.current.outline)) return;
        layerRef.current = { lod, bitmap, window: [x0, x1], key, yMax: lod.yMax * Y_HEADROOM, outline: true };
        draw();
      };
      return q.client
        .query('timeline', { ...args, outline }, undefined, showOutline)
        .then(({ bitmap, ...lod }) => {
          lastCost.current = performance.now() - sent;
          return { lod, bitmap: bitmap!, window: [x0, x1], key, yMax: lod.yMax * Y_HEADROOM };
        });
    });
  };
  /** What the last level of detail cost, asked to answered (sets how long a window must be still). */
  const lastCost = useRef(0);
  const requestRef = useRef(requestLayer);
  requestRef.current = requestLayer;

  // A moving window asks the worker once it has been still for a moment (stillMs): a level of
  // detail of a wide window costs the worker up to ~0.9 s (1 GB trace), and computed during a
  // gesture it took the CPU from the gesture's own frames (2 cores); until then frames stretch
  // the last layer.
  useEffect(() => {
    let still: ReturnType<typeof setTimeout> | undefined;
    const off = p.live.subscribe(() => {
      draw();
      clearTimeout(still);
      still = setTimeout(() => requestRef.current(), stillMs(lastCost.current));
    });
    return () => {
      off();
      clearTimeout(still);
    };
  }, [p.live, draw]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: these name everything the query reads besides the live window
  useEffect(() => {
    if (measured !== null) requestLayer();
  }, [measured, plot.width, p.device.device, p.axis, p.stream, p.search, p.stack, p.zoom]);
  // Every render (selection, search matches, markers, size) redraws in the next frame.
  useEffect(draw);

  const { zoom, ...gestures } = useGestures(p, plot, layerRef, markers, (s) => {
    if (hoverRef.current) hoverRef.current.textContent = s || hintFor(p.stack);
  });
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
  useZoomModeKeys((factor, mode) => {
    zoomRef.current(factor, plot.left + plot.width / 2);
    if (mode !== props.current.zoom) props.current.onZoomMode(mode);
  });
  const part = (k: keyof Parts) => (e: HTMLElement | null) => {
    parts.current[k] = e as HTMLCanvasElement & HTMLDivElement;
  };
  return (
    <div className="timeline">
      <div className="timeline-plot" style={{ height: HEIGHT }}>
        <canvas ref={part('yAxis')} style={{ width: MARGIN.left, height: HEIGHT }} />
        <div
          className="plot-clip"
          style={{ left: plot.left, top: plot.top, width: plot.width, height: plot.height }}
        >
          <div
            className="plot-moving"
            ref={part('moving')}
            style={{ width: plot.width, height: plot.height }}
          >
            <canvas ref={part('layer')} style={{ width: plot.width, height: plot.height }} />
          </div>
          <canvas ref={part('labels')} style={{ width: plot.width, height: LABELS_HEIGHT }} />
        </div>
        <canvas ref={part('xAxis')} style={{ top: plot.top + plot.height, width, height: MARGIN.bottom }} />
        {/* The pointer and keyboard target, over the others: never drawn on, it paints nothing. */}
        <canvas
          ref={canvasRef}
          className="plot-target"
          width={0}
          height={0}
          style={{ width: '100%', height: HEIGHT }}
          tabIndex={0}
          aria-label="active memory timeline"
          {...gestures}
        />
      </div>
      <div className="hover" aria-live="off" ref={hoverRef}>
        {hintFor(p.stack)}
      </div>
      {p.stack === 'pools' && <PoolLegend groups={groups} stream={p.stream ?? null} name={groupName} />}
    </div>
  );
}

/**
 * The timeline's canvases: the layer with its marks (moved as one composited layer), the y axis
 * in the left margin, and the strips of labels redrawn each frame.
 */
interface Parts {
  moving: HTMLDivElement | null;
  layer: HTMLCanvasElement | null;
  yAxis: HTMLCanvasElement | null;
  labels: HTMLCanvasElement | null;
  xAxis: HTMLCanvasElement | null;
}

/** Height of the step markers' label strip along the plot's top. */
const LABELS_HEIGHT = 14;

function changed(a: unknown[], b: unknown[]): boolean {
  return a.length !== b.length || a.some((v, i) => v !== b[i]);
}

const CLICKS: Record<TimelineStack, string> = {
  allocations: 'click: pin an allocation',
  segments: 'click: its segment in the pool state',
  pools: 'click: pin the allocation (or select the entry)',
};

function hintFor(stack: TimelineStack): string {
  return `wheel: zoom · drag: pan · ${CLICKS[stack]} · Shift/Ctrl+↑/↓: zoom horizontally/proportionally · on the focused plot: +/− or W/S zoom, A/D pan, 0 whole trace`;
}

/**
 * Shift+↑/↓ and Ctrl+↑/↓ anywhere on the page but in a field: zoom in/out around the window's
 * middle, horizontally or proportionally.
 */
function useZoomModeKeys(zoom: (factor: number, mode: ZoomMode) => void): void {
  const latest = useRef(zoom);
  latest.current = zoom;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA') return;
      if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
      const mode = e.shiftKey ? 'horizontal' : e.ctrlKey || e.metaKey ? 'proportional' : null;
      if (mode === null) return;
      e.preventDefault();
      latest.current(e.key === 'ArrowUp' ? 0.5 : 2, mode);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
const NO_MARKERS = prepareMarkers([]);

function useGestures(
  p: Props,
  plot: Plot,
  layerRef: React.RefObject<Layer | null>,
  markers: MarkerSet,
  setHover: (s: string) => void,
) {
  const drag = useRef<{ x: number; window: [number, number]; moved: boolean } | null>(null);
  const hover = useHoverFacts(p, plot, layerRef, setHover);
  const xOf = (e: React.MouseEvent) =>
    e.clientX - (e.currentTarget as HTMLElement).getBoundingClientRect().left;
  const yOf = (e: React.MouseEvent) =>
    e.clientY - (e.currentTarget as HTMLElement).getBoundingClientRect().top;
  const clamp = (w: [number, number]): [number, number] => clampWindow(w, p.device.extent[p.axis], p.axis);
  const zoom = (factor: number, atPx: number) => {
    const [x0, x1] = p.live.get();
    const at = x0 + ((atPx - plot.left) / plot.width) * (x1 - x0);
    p.live.set(clamp([at - (at - x0) * factor, at + (x1 - at) * factor]));
  };
  return {
    zoom,
    onMouseDown: (e: React.MouseEvent) => {
      drag.current = { x: e.clientX, window: p.live.get(), moved: false };
    },
    onMouseMove: (e: React.MouseEvent) => {
      const d = drag.current;
      if (d && e.buttons === 1) {
        const dx = e.clientX - d.x;
        if (Math.abs(dx) > 3) d.moved = true;
        const shift = (-dx / plot.width) * (d.window[1] - d.window[0]);
        p.live.set(clamp([d.window[0] + shift, d.window[1] + shift]));
        return;
      }
      hover(xOf(e), yOf(e));
    },
    onMouseLeave: () => hover(null, null),
    onMouseUp: (e: React.MouseEvent) => {
      const d = drag.current;
      drag.current = null;
      const layer = layerRef.current;
      if (d?.moved || !layer) return;
      const oom = oomNear(markers, plot, p.live.get(), xOf(e), yOf(e));
      if (oom !== null) {
        p.live.flush();
        p.onEntry(oom);
        return;
      }
      const hit = columnAt(layer, plot, p.live.get(), xOf(e), yOf(e));
      if (hit === null) return;
      p.live.flush();
      p.onPick(hit.entry, hit.bytes);
    },
    // Perfetto's keys too: W/S zoom, A/D pan a fifth of the window.
    onKeyDown: (e: React.KeyboardEvent) => {
      const mid = plot.left + plot.width / 2;
      const key = e.key.toLowerCase();
      if (key === '+' || key === '=' || key === 'w') zoom(0.5, mid);
      else if (key === '-' || key === 's') zoom(2, mid);
      else if (key === '0') p.live.set(p.device.extent[p.axis]);
      else if (key === 'a' || key === 'd') {
        const [x0, x1] = p.live.get();
        const shift = ((key === 'a' ? -1 : 1) * (x1 - x0)) / 5;
        p.live.set(clamp([x0 + shift, x1 + shift]));
      }
    },
  };
}

/** How near (px) a click must fall to an OOM marker's line to select the OOM entry. */
const OOM_REACH = 4;

/** How far right of its line an OOM marker's label reaches (the label strip only). */
const OOM_LABEL_REACH = 30;

/** The OOM entry whose marker line is within OOM_REACH of (x, y), or whose label is under it; else null. */
function oomNear(
  markers: MarkerSet,
  plot: Plot,
  [w0, w1]: [number, number],
  x: number,
  y: number,
): number | null {
  const { x: at, entry } = markers.ooms;
  const onLabels = y >= plot.top && y < plot.top + LABELS_HEIGHT;
  for (let i = 0; i < at.length; i++) {
    const px = plot.left + ((at[i]! - w0) / (w1 - w0)) * plot.width;
    // A label at the right edge is drawn left of its line.
    const labelAt = Math.min(px, plot.left + plot.width - OOM_LABEL_REACH);
    if (Math.abs(px - x) <= OOM_REACH) return entry[i]!;
    if (onLabels && x >= labelAt && x <= labelAt + OOM_LABEL_REACH) return entry[i]!;
  }
  return null;
}

/**
 * The hover line under the pointer: the level of detail's figures at once, then the worker's facts
 * (time since the trace start, the allocation's user frame) once it answers, unless the pointer
 * has moved to another entry or allocation by then.
 */
function useHoverFacts(
  p: Props,
  plot: Plot,
  layerRef: React.RefObject<Layer | null>,
  setHover: (s: string) => void,
): (x: number | null, y: number | null) => void {
  const asked = useRef('');
  // The last answer, kept while the pointer stays on the same entry and allocation.
  const known = useRef<{ key: string; facts: HoverFacts } | null>(null);
  return (x, y) => {
    const layer = layerRef.current;
    if (x === null || y === null || layer === null) {
      asked.current = '';
      setHover('');
      return;
    }
    const window = p.live.get();
    const under = hoverTarget(layer, plot, window, x, y, p.stack);
    const key = under === null ? '' : `${p.device.device}:${under.entry}:${under.alloc}`;
    const facts = known.current?.key === key ? known.current.facts : undefined;
    setHover(describeAt(layer, plot, window, x, y, p.stack, facts));
    if (under === null || facts !== undefined || key === asked.current) return;
    asked.current = key;
    p.client.query('hover', { device: p.device.device, ...under }).then((answer) => {
      known.current = { key, facts: answer };
      if (asked.current !== key || layerRef.current === null) return;
      setHover(describeAt(layerRef.current, plot, p.live.get(), x, y, p.stack, answer));
    });
  };
}

/** The entry and the allocation (null: none, or merged ones) under a point, which the hover's facts are asked for. */
function hoverTarget(
  layer: Layer,
  plot: Plot,
  window: [number, number],
  x: number,
  y: number,
  stack: TimelineStack,
): { entry: number; alloc: number | null } | null {
  const hit = columnAt(layer, plot, window, x, y);
  if (hit === null) return null;
  const r = runUnder(layer.lod, hit);
  const code = r >= 0 ? layer.lod.runAlloc[r]! : -1;
  // Segment runs name pieces of reserved memory; pools' free envelope parts are negative codes.
  return { entry: hit.entry, alloc: stack !== 'segments' && code >= 0 ? code : null };
}

/** "after entry 1,234 at 2.05 s" (the time since the trace start, once the worker has said it). */
function entryWords(entry: number, facts?: HoverFacts): string {
  const since = facts?.since_start_us;
  return `after entry ${formatCount(entry)}${since == null ? '' : ` at ${formatDuration(Math.round(since))}`}`;
}

/** " from name (file.py:12)": where the user's code made the allocation, once the worker has said it. */
function madeAt(alloc: number, facts?: HoverFacts): string {
  const a = facts?.allocation;
  return a?.id === alloc && a.frame !== null ? ` from ${a.frame}` : '';
}

/**
 * The layer's column under a point of the plot. The layer may be for another window than the one
 * on screen (stretched while the worker computes the new one): the point's x goes through the
 * window shown to the layer's own.
 */
function columnAt(
  layer: Layer,
  plot: Plot,
  [w0, w1]: [number, number],
  x: number,
  y: number,
): { entry: number; bytes: number; column: number } | null {
  const [l0, l1] = layer.window;
  const at = w0 + ((x - plot.left) / plot.width) * (w1 - w0);
  const column = Math.floor(((at - l0) / (l1 - l0)) * layer.lod.columns);
  if (column < 0 || column >= layer.lod.columns || y < plot.top || y > plot.top + plot.height) return null;
  const bytes = ((plot.top + plot.height - y) / plot.height) * layer.yMax;
  return { entry: layer.lod.sample[column]!, bytes, column };
}

function describeAt(
  layer: Layer | null,
  plot: Plot,
  window: [number, number],
  x: number,
  y: number,
  stack: TimelineStack,
  facts?: HoverFacts,
): string {
  if (!layer) return '';
  const hit = columnAt(layer, plot, window, x, y);
  if (hit === null) return '';
  const lod = layer.lod;
  const when = entryWords(hit.entry, facts);
  if (stack === 'pools') return describePools(lod, hit, when, facts);
  const active = lod.active[hit.column]!;
  let under = '';
  const r = runUnder(lod, hit);
  if (r >= 0) {
    const bytes = lod.runY1[r]! - lod.runY0[r]!;
    const [one, many] =
      stack === 'segments' ? ['reserved piece', 'reserved pieces'] : ['allocation', 'allocations'];
    under =
      lod.runAlloc[r]! >= 0
        ? ` · ${one} #${lod.runAlloc[r]}: ${formatBytes(bytes)} (${exactBytes(bytes)})${madeAt(lod.runAlloc[r]!, facts)}`
        : ` · ${lod.runCount[r]} ${many} under a pixel tall: ${formatBytes(bytes)} in all (click picks the exact one)`;
  }
  const reserved = lod.reserved[hit.column]!;
  if (stack === 'segments')
    return `${when}: reserved ${formatBytes(reserved)} (${exactBytes(reserved)})${under}`;
  return `${when}: active ${formatBytes(active)} (${exactBytes(active)}), reserved ${formatBytes(reserved)}${under}`;
}

/** The pools timeline under the pointer: an allocation, merged ones, or a group's free envelope part. */
function describePools(
  lod: Layer['lod'],
  hit: { entry: number; bytes: number; column: number },
  when: string,
  facts?: HoverFacts,
): string {
  const reserved = lod.reserved[hit.column]!;
  let under = '';
  const r = runUnder(lod, hit);
  if (r >= 0) {
    const bytes = lod.runY1[r]! - lod.runY0[r]!;
    const size = `${formatBytes(bytes)} (${exactBytes(bytes)})`;
    const code = lod.runAlloc[r]!;
    const g = lod.groups?.[freePartGroup(code)];
    if (g !== undefined) under = ` · ${groupName(g)}: reserved for it, not allocated ${size}`;
    else if (code >= 0)
      under = ` · allocation #${code}: ${size}${madeAt(code, facts)} (click: its pool and stream)`;
    else
      under = ` · ${lod.runCount[r]} allocations under a pixel tall: ${size} in all (click picks the exact one)`;
  }
  return `${when}: reserved ${formatBytes(reserved)} (${exactBytes(reserved)}), active ${formatBytes(lod.active[hit.column]!)}${under}`;
}

/** The run drawn at the hit's column and height (the last one, as drawn on top), or -1. */
function runUnder(lod: Layer['lod'], hit: { bytes: number; column: number }): number {
  for (let r = lod.runs - 1; r >= 0; r--) {
    if (lod.runX0[r]! > hit.column || lod.runX1[r]! <= hit.column) continue;
    if (hit.bytes >= lod.runY0[r]! && hit.bytes < lod.runY1[r]!) return r;
  }
  return -1;
}

/** A (pool, stream) group in words. */
export function groupName(g: PoolGroup): string {
  const pool =
    g.pool[0] === 0 && g.pool[1] === 0 ? 'default pool' : `private pool (${g.pool[0]}, ${g.pool[1]})`;
  return `${pool} · stream ${formatStream(g.stream)}`;
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
