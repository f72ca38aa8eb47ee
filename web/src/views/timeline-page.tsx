import { useCallback, useEffect, useState } from 'react';
import type { AllocationDetails } from '../../../src/engine/derived/index.js';
import { formatCount } from '../format.js';
import type { Selection } from '../timeline/draw.js';
import { Minimap } from '../timeline/minimap.js';
import { SearchBox } from '../timeline/search-box.js';
import { StreamSelect } from '../timeline/stream-select.js';
import { clampWindow, Timeline } from '../timeline/timeline.js';
import { useLiveWindow } from '../timeline/use-live-window.js';
import type { ViewState } from '../url-state.js';
import type { EngineClient } from '../worker/client.js';
import type { DeviceInfo } from '../worker/protocol.js';
import { Details } from './details.js';
import { OomRequest } from './diagnosis/oom-request.js';
import { PoolView } from './pool-view.js';
import { useWords } from './producer-words.js';
import { useSelection } from './use-selection.js';
import { ZoomModeButton } from './zoom-mode-button.js';

interface Props {
  client: EngineClient;
  device: DeviceInfo;
  view: ViewState;
  update: (patch: Partial<ViewState>) => void;
}

/**
 * The timeline over the pool state at the selected entry, with the pinned allocation's details
 * beside them. One selection (entry + allocation) drives all three; arrow keys step entries.
 */
export function TimelinePage({ client, device, view, update }: Props) {
  const w = useWords();
  const n = device.entries;
  // A snapshot taken without recording history (or whose trace only marks the dump): the dump's
  // state and nothing over time.
  const dumpOnly = !device.hasHistory;
  const entry = Math.max(-1, Math.min(view.entry ?? n - 1, n - 1));
  const axis = view.axis === 'time' && device.hasTime ? 'time' : 'entry';
  const extent = device.extent[axis];
  const window = view.window ? clampWindow(view.window, extent, axis) : extent;
  // Pan and zoom move this; the view state (URL, tables' "in range") follows once they settle.
  const live = useLiveWindow(window, (w) => update({ window: w }));
  // The timeline's first level of detail goes first in the one worker; the minimap and the pool
  // state wait for it (each costs the worker up to a second on a 1 GB trace).
  const layerKey = `${device.device}:${axis}`;
  const [drawnKey, setDrawnKey] = useState<string | null>(null);
  const onLayer = useCallback(() => setDrawnKey(layerKey), [layerKey]);
  const switchAxis = (to: 'entry' | 'time') => {
    live.flush();
    client
      .query('axisWindow', { device: device.device, window: live.get(), from: axis, to })
      .then((w) => update({ axis: to, window: clampWindow(w, device.extent[to], to) }));
  };
  // A stream the device does not have (a link from another file) shows every stream. The list
  // comes after the first timeline; until then a linked stream is taken at its word.
  const streams = useStreams(client, device.device, drawnKey !== null);
  const stream = view.stream !== null && (streams?.includes(view.stream) ?? true) ? view.stream : null;
  const [matches, setMatches] = useState<Uint8Array | null>(null);
  // The entry line, details and pool state come in one answer, after the first timeline.
  const { shown, pick } = useSelection(
    client,
    device.device,
    { entry, alloc: view.alloc, stream, stack: view.stack, enabled: dumpOnly || drawnKey !== null },
    (k, alloc) => update({ entry: k, alloc }),
  );
  const info = shown?.entry ?? null;
  const details = shown?.details ?? null;
  useArrowKeys(entry, n, (k) => update({ entry: k }));
  // Stable, so the memoized pool view skips the renders of a pan or zoom.
  const selectAlloc = useCallback((alloc: number) => update({ alloc }), [update]);

  // A click on the segment timeline selects the entry and outlines the segment in the pool state.
  const pickSegment = (k: number, bytes: number) =>
    client
      .query('piece', { device: device.device, entry: k, bytes })
      .then((piece) => update({ entry: k, segment: piece?.address ?? null }));
  // A click on the pools timeline pins the allocation under it (the worker finds it in its
  // group's stack, the stream's groups only when filtered), or in an envelope's free part
  // selects the entry alone.
  const pickPoolPart = (k: number, bytes: number) =>
    client
      .query('part', { device: device.device, entry: k, bytes, stream })
      .then((part) => update({ entry: k, alloc: part !== null && part.alloc >= 0 ? part.alloc : null }));
  // An OOM marker's click: the OOM entry, nothing pinned (the entry line names the request).
  const selectEntry = (k: number) => update({ entry: k, alloc: null });
  const cursor = axis === 'entry' ? entry + 0.5 : (info?.time_us ?? null);
  return (
    <main className="timeline-page">
      {dumpOnly ? (
        <DumpOnly entries={n} />
      ) : (
        <>
          <div className="toolbar">
            <span>x axis:</span>
            <label>
              <input
                type="radio"
                name="axis"
                checked={axis === 'entry'}
                onChange={() => switchAxis('entry')}
              />
              trace entry
            </label>
            <label title={device.hasTime ? '' : 'this trace has no time_us'}>
              <input
                type="radio"
                name="axis"
                disabled={!device.hasTime}
                checked={axis === 'time'}
                onChange={() => switchAxis('time')}
              />
              wall time
            </label>
            <button
              type="button"
              onClick={() => {
                // Through the live window: a gesture still settling must not win over the click.
                live.set(extent);
                live.flush();
              }}
            >
              whole trace
            </button>
            <span
              title={w(
                "allocations: active memory, as memory_viz's Active Memory Timeline; segments: reserved memory, as its Active Cached Segment Timeline; pools: reserved memory by pool and stream with the allocations in it, as its Allocated Memory (incl. Private Pools)",
              )}
            >
              stack:
            </span>
            {(['allocations', 'segments', 'pools'] as const).map((s) => (
              <label key={s}>
                <input
                  type="radio"
                  name="stack"
                  checked={view.stack === s}
                  onChange={() => update({ stack: s })}
                />
                {s}
              </label>
            ))}
            <StreamSelect
              streams={streams ?? []}
              stream={stream}
              onStream={(s) => update({ stream: s })}
              ignored={
                view.stack === 'segments'
                  ? "the segments stack draws the device's reserved memory, every stream's"
                  : undefined
              }
            />
            <SearchBox
              client={client}
              device={device.device}
              term={view.search}
              onTerm={(search) => update({ search })}
              onMatches={setMatches}
            />
            <ZoomModeButton mode={view.zoom} onMode={(zoom) => update({ zoom })} />
          </div>
          <Timeline
            client={client}
            device={device}
            axis={axis}
            live={live}
            onLayer={onLayer}
            cursor={cursor}
            selection={selectionOf(details, axis)}
            matches={matches}
            search={view.search}
            stream={stream}
            stack={view.stack}
            zoom={view.zoom}
            onZoomMode={(zoom) => update({ zoom })}
            onPick={view.stack === 'segments' ? pickSegment : view.stack === 'pools' ? pickPoolPart : pick}
            onEntry={selectEntry}
          />
          <Minimap
            client={client}
            device={device}
            axis={axis}
            live={live}
            enabled={drawnKey === layerKey}
            stream={stream}
            onEntry={selectEntry}
          />
        </>
      )}
      <div className="below">
        <PoolView
          pool={shown?.pool ?? null}
          entry={dumpOnly ? null : entry}
          info={shown === null ? undefined : info}
          alloc={view.alloc}
          segment={view.segment}
          onSelect={selectAlloc}
        />
        {details === null && info?.action === 'oom' ? (
          <OomRequest client={client} device={device.device} file={view.file ?? ''} entry={info.entry} />
        ) : (
          <Details details={details} onEntry={(k) => update({ entry: k })} />
        )}
      </div>
    </main>
  );
}

/** In place of the timeline when the file has no trace: why there is none, and what below is. */
function DumpOnly({ entries }: { entries: number }) {
  const w = useWords();
  const markers = `its trace holds ${formatCount(entries)} snapshot marker${entries === 1 ? '' : 's'} and nothing else`;
  return (
    <div className="dump-only" role="note">
      <b>dump only: no trace recorded.</b> This snapshot holds the allocator's state when it was taken (its
      segments and the blocks in them) but no history of allocations{entries > 0 && ` (${markers})`}, so there
      is no timeline. The pool state below is that dump. To get a timeline, call{' '}
      <code>{w('torch.cuda.memory._record_memory_history()')}</code> before the code you want to see.
    </div>
  );
}

/** The device's streams, asked for once enabled (null until answered). */
function useStreams(client: EngineClient, device: number, enabled: boolean): number[] | null {
  const [streams, setStreams] = useState<number[] | null>(null);
  useEffect(() => {
    if (enabled) client.query('streams', { device }).then(setStreams);
  }, [client, device, enabled]);
  return streams;
}

function selectionOf(
  d: (AllocationDetails & { offset: number }) | null,
  axis: 'entry' | 'time',
): Selection | null {
  if (d === null) return null;
  const at = (k: number | null, t: number | null): number | null =>
    axis === 'entry' ? (k !== null && k >= 0 ? k + 0.5 : null) : t;
  const y0 = Math.max(0, d.offset);
  return {
    alloc: d.id,
    x0: at(d.alloc_entry, d.alloc_time_us),
    x1: at(d.free_completed_entry, d.free_time_us),
    y0,
    y1: d.offset >= 0 ? y0 + d.size : y0,
  };
}

/** ←/→ step one entry, with Shift ten, Home/End jump to the ends (unless typing in a field). */
function useArrowKeys(entry: number, n: number, go: (k: number) => void): void {
  useEffect(() => {
    if (n === 0) return;
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA') return;
      const step = e.shiftKey ? 10 : 1;
      const next =
        e.key === 'ArrowRight'
          ? entry + step
          : e.key === 'ArrowLeft'
            ? entry - step
            : e.key === 'Home'
              ? 0
              : e.key === 'End'
                ? n - 1
                : null;
      if (next === null) return;
      e.preventDefault();
      go(Math.max(0, Math.min(n - 1, next)));
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [entry, n, go]);
}
