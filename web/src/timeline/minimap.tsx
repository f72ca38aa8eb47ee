import { useEffect, useRef, useState } from 'react';
import type { OomMark, TimelineAxis } from '../../../src/engine/views/timeline/index.js';
import type { EngineClient } from '../worker/client.js';
import type { DeviceInfo } from '../worker/protocol.js';
import { sizedContext, useMeasuredWidth } from './canvas.js';
import { MARGIN, OOM_COLOUR, type Plot } from './draw.js';
import { frameScheduler } from './frame-scheduler.js';
import type { LiveWindow } from './live-window.js';
import { clampWindow } from './timeline.js';

/** What the timeline and its minimap share: the data, the axis and the (live) window they show. */
export interface WindowProps {
  client: EngineClient;
  device: DeviceInfo;
  axis: TimelineAxis;
  live: LiveWindow;
  /** Draw only this CUDA stream's allocations (raw stream id); null/undefined: all streams. */
  stream?: number | null;
}

const HEIGHT = 44;

/**
 * The whole trace in miniature with the timeline's window as a brush: drag across it to choose a
 * window, click to centre the current one there. `enabled` holds its query back (the timeline's
 * first level of detail goes first in the one worker).
 */
export function Minimap(p: WindowProps & { enabled: boolean; onEntry: (entry: number) => void }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const measured = useMeasuredWidth(ref);
  const width = measured ?? 800;
  const [layer, setLayer] = useState<ImageBitmap | null>(null);
  const ooms = useOoms(p);
  const plot: Plot = {
    left: MARGIN.left,
    top: 0,
    width: Math.max(10, width - MARGIN.left - MARGIN.right),
    height: HEIGHT,
  };
  const extent = p.device.extent[p.axis];
  const toPx = (x: number): number => plot.left + ((x - extent[0]) / (extent[1] - extent[0])) * plot.width;
  const toX = (px: number): number =>
    extent[0] + (Math.max(0, Math.min(plot.width, px - plot.left)) / plot.width) * (extent[1] - extent[0]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the whole trace depends on device, axis and width only
  useEffect(() => {
    if (measured === null || !p.enabled) return;
    let live = true;
    const [x0, x1] = extent;
    p.client
      .query('timeline', {
        device: p.device.device,
        request: { axis: p.axis, x0, x1, columns: plot.width, rows: HEIGHT },
        stream: p.stream ?? null,
        paint: { width: plot.width, height: HEIGHT, dpr: devicePixelRatio },
      })
      .then((lod) => {
        if (live && lod.bitmap) setLayer(lod.bitmap);
      });
    return () => {
      live = false;
    };
  }, [p.client, p.device.device, p.axis, plot.width, p.stream, measured === null, p.enabled]);

  // The trace in miniature changes only with its query; the brush is a box over it, moved every
  // frame of a pan or zoom without redrawing (or re-uploading) the canvas. Its parts move by CSS
  // transforms (composited): setting its left and width cost a layout and a paint per frame.
  // biome-ignore lint/correctness/useExhaustiveDependencies: toPx follows the device's extent and the width, both listed
  useEffect(() => {
    const g = sizedContext(ref.current!, width, HEIGHT);
    if (layer) g.drawImage(layer, plot.left, 0, plot.width, HEIGHT);
    // The OOMs, where the whole trace shows them (the timeline's window may not).
    g.fillStyle = OOM_COLOUR;
    for (const m of ooms) g.fillRect(Math.round(toPx(m.x)) - 1, 0, 3, HEIGHT);
    ref.current!.dataset.ooms = ooms.map((m) => `${m.entry}@${Math.round(toPx(m.x))}`).join(' ');
  }, [layer, width, plot.left, plot.width, ooms]);
  const brushRef = useRef<HTMLDivElement>(null);
  const place = useRef(() => {});
  place.current = () => {
    // A redraw scheduled before the tab was left runs after the brush is gone: nothing to place.
    const brush = brushRef.current;
    if (brush === null) return;
    const [w0, w1] = p.live.get();
    const a = toPx(w0) - plot.left;
    const b = Math.max(a + 2, toPx(w1) - plot.left);
    const [left, box, right] = brush.children as unknown as HTMLElement[];
    const W = plot.width;
    left!.style.transform = `scale(${a / W}, 1)`;
    box!.style.transform = `translate(${a}px, 0) scale(${(b - a) / W}, 1)`;
    right!.style.transform = `translate(${b}px, 0) scale(${(W - b) / W}, 1)`;
  };
  const [draw] = useState(() => frameScheduler(() => place.current()));
  useEffect(() => p.live.subscribe(draw), [p.live, draw]);
  useEffect(draw);

  const drag = useRef<number | null>(null);
  const pxOf = (e: React.MouseEvent) => e.clientX - ref.current!.getBoundingClientRect().left;
  const setWindow = (w: [number, number]) => p.live.set(clampWindow(w, extent, p.axis));
  return (
    <div className="minimap-wrap">
      <canvas
        ref={ref}
        className="minimap"
        style={{ width: '100%', height: HEIGHT }}
        aria-label="minimap: drag to choose the timeline window"
        onMouseDown={(e) => {
          drag.current = pxOf(e);
        }}
        onMouseMove={(e) => {
          if (drag.current === null || e.buttons !== 1) return;
          const a = toX(Math.min(drag.current, pxOf(e)));
          const b = toX(Math.max(drag.current, pxOf(e)));
          if (Math.abs(pxOf(e) - drag.current) > 3) setWindow([a, b]);
        }}
        onMouseUp={(e) => {
          const start = drag.current;
          drag.current = null;
          if (start === null || Math.abs(pxOf(e) - start) > 3) return;
          // A click on an OOM mark centres the window on it and selects that entry.
          const oom = ooms.find((m) => Math.abs(toPx(m.x) - pxOf(e)) <= 4);
          const [w0, w1] = p.live.get();
          const at = oom === undefined ? toX(pxOf(e)) : oom.x;
          setWindow([at - (w1 - w0) / 2, at + (w1 - w0) / 2]);
          if (oom !== undefined) p.onEntry(oom.entry);
        }}
      />
      <div className="minimap-plot" style={{ left: plot.left, width: plot.width }}>
        {/* Washed-out left of the window, the window's box, washed-out right of it; each spans
            the plot and is scaled into place. */}
        <div ref={brushRef} style={{ width: plot.width }}>
          <div className="minimap-wash" />
          <div className="minimap-brush" />
          <div className="minimap-wash" />
        </div>
      </div>
    </div>
  );
}

/** The device's OOM entries on the axis (none until answered). */
function useOoms(p: WindowProps & { enabled: boolean }): OomMark[] {
  const [ooms, setOoms] = useState<OomMark[]>([]);
  useEffect(() => {
    if (p.enabled) p.client.query('ooms', { device: p.device.device, axis: p.axis }).then(setOoms);
  }, [p.client, p.device.device, p.axis, p.enabled]);
  return ooms;
}
