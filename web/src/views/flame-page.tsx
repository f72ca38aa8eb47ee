import { useEffect, useMemo, useRef, useState } from 'react';
import type { AllocationDetails } from '../../../src/engine/derived/index.js';
import type { FlameTree } from '../../../src/engine/views/flame/index.js';
import { frameLabel } from '../flame/labels.js';
import { drawFlame, frameWhere, hitFlame, layoutFlame, parentsOf, ROW } from '../flame/layout.js';
import { exactBytes, formatBytes, formatCount } from '../format.js';
import { sizedContext, useParentWidth } from '../timeline/canvas.js';
import type { FlameState, ViewState } from '../url-state.js';
import type { FlameAllocation } from '../worker/analysis-protocol.js';
import type { EngineClient } from '../worker/client.js';
import type { DeviceInfo } from '../worker/protocol.js';
import { Bytes } from './analyses/bits.js';
import { Details } from './details.js';

interface Props {
  client: EngineClient;
  device: DeviceInfo;
  view: ViewState;
  update: (patch: Partial<ViewState>) => void;
}

const LISTED = 100;

/**
 * Live memory at the selected entry (or the allocated peak) as an icicle: width = bytes, user
 * frames warm and bold, library frames grey. Click a frame to zoom into it and list the
 * allocations under it; click one of those to pin it in the timeline and pool state.
 */
export function FlamePage({ client, device, view, update }: Props) {
  // What it shows and the zoomed frame live in the URL (a link restores them).
  const flame = view.flame;
  const [peakByDefault] = useState(view.entry === null);
  const atPeak = flame.peak ?? peakByDefault;
  const fullStacks = flame.full;
  const setFlame = (patch: Partial<FlameState>) => update({ flame: { ...flame, node: 0, ...patch } });
  const [tree, setTree] = useState<FlameTree | null>(null);
  const shown = useRef<string | null>(null);
  const args = {
    device: device.device,
    entry: atPeak ? null : (view.entry ?? device.entries - 1),
    fullStacks,
  };

  const key = JSON.stringify(args);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the key stands for args
  useEffect(() => {
    let live = true;
    client.query('flame', args).then(({ tree }) => {
      if (!live) return;
      setTree(tree);
      // A new tree (another entry) starts at its root; the first one keeps the link's zoom.
      if (shown.current !== null && shown.current !== key) setFlame({});
      shown.current = key;
    });
    return () => {
      live = false;
    };
  }, [client, key]);

  const download = async () => {
    if (tree === null) return;
    const name = `${view.file ?? 'snapshot'} ${device.label} after entry ${tree.after_entry}`;
    const json = await client.query('speedscope', { device: device.device, entry: tree.after_entry, name });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
    a.download = `${(view.file ?? 'snapshot').replace(/\.[^.]*$/, '')}.${device.label.replace(':', '')}.entry${tree.after_entry}.speedscope.json`;
    a.click();
    URL.revokeObjectURL(a.href);
  };

  return (
    <main className="flame-page">
      <div className="toolbar">
        <span>live memory</span>
        <button type="button" aria-pressed={!atPeak} onClick={() => setFlame({ peak: false })}>
          at the selected entry
        </button>
        <button type="button" aria-pressed={atPeak} onClick={() => setFlame({ peak: true })}>
          at the peak
        </button>
        <label>
          <input
            type="checkbox"
            checked={fullStacks}
            onChange={(e) => setFlame({ full: e.target.checked })}
          />{' '}
          full stacks (not only your own code)
        </label>
        <button type="button" onClick={download} disabled={tree === null}>
          download speedscope profile
        </button>
      </div>
      {tree === null ? (
        <p className="hint">computing…</p>
      ) : (
        <FlameBody
          client={client}
          tree={tree}
          zoom={flame.node < tree.size[0]! ? flame.node : 0}
          setZoom={(node) => setFlame({ peak: atPeak, node })}
          view={view}
          update={update}
        />
      )}
    </main>
  );
}

function FlameBody({
  client,
  tree,
  zoom,
  setZoom,
  view,
  update,
}: {
  client: EngineClient;
  tree: FlameTree;
  zoom: number;
  setZoom: (i: number) => void;
  view: ViewState;
  update: Props['update'];
}) {
  const parent = useMemo(() => parentsOf(tree), [tree]);
  const path: number[] = [];
  for (let a = zoom; a >= 0; a = parent[a]!) path.unshift(a);
  const children: number[] = [];
  for (let c = zoom + 1; c < zoom + tree.size[zoom]!; c += tree.size[c]!) children.push(c);
  const at = tree.after_entry;
  return (
    <>
      <p className="flame-summary">
        {formatBytes(tree.total_bytes)} in {formatCount(tree.count[0]!)} allocations live after entry{' '}
        {formatCount(at)} ({tree.full_stacks ? 'whole stacks' : 'frames in your own code'}, outermost at the
        top)
      </p>
      <nav className="crumbs" aria-label="zoom path">
        {path.map((i) => (
          <button key={i} type="button" aria-current={i === zoom} onClick={() => setZoom(i)}>
            {frameLabel(tree, i)}
          </button>
        ))}
      </nav>
      <FlameCanvas tree={tree} parent={parent} zoom={zoom} onZoom={setZoom} />
      <div className="below">
        <div className="flame-lists">
          <h4>Under {frameLabel(tree, zoom)}</h4>
          <table className="panel-table" aria-label="frames under the zoomed frame">
            <tbody>
              {children.map((c) => (
                <tr key={c}>
                  <td className="num">
                    <Bytes n={tree.bytes[c]!} />
                  </td>
                  <td className="num">{formatCount(tree.count[c]!)}</td>
                  <td>
                    <button
                      type="button"
                      className={`link${tree.frames[tree.frame[c]!]?.user ? ' user' : ''}`}
                      title={frameWhere(tree, c)}
                      onClick={() => setZoom(c)}
                    >
                      {frameLabel(tree, c)}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Allocations client={client} tree={tree} node={zoom} view={view} update={update} />
        </div>
        <Pinned client={client} device={tree.device} at={at} alloc={view.alloc} update={update} />
      </div>
    </>
  );
}

function FlameCanvas({
  tree,
  parent,
  zoom,
  onZoom,
}: {
  tree: FlameTree;
  parent: Int32Array;
  zoom: number;
  onZoom: (i: number) => void;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  const width = useParentWidth(ref);
  const [hover, setHover] = useState<{ node: number; x: number; y: number } | null>(null);
  const layout = useMemo(() => layoutFlame(tree, parent, zoom, width), [tree, parent, zoom, width]);
  const height = Math.max(1, layout.rows) * ROW;
  useEffect(() => {
    drawFlame(sizedContext(ref.current!, width, height), tree, layout, zoom, hover?.node ?? -1, width);
  }, [tree, layout, zoom, hover, width, height]);
  const nodeAt = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    return {
      node: hitFlame(tree, layout, e.clientX - r.left, e.clientY - r.top),
      x: e.clientX - r.left,
      y: e.clientY - r.top,
    };
  };
  const h = hover !== null && hover.node >= 0 ? hover : null;
  return (
    <div className="flame-wrap">
      <canvas
        ref={ref}
        className="flame"
        tabIndex={0}
        aria-label="flame graph: click a frame to zoom, Escape to zoom out"
        style={{ width, height }}
        onMouseMove={(e) => setHover(nodeAt(e))}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => {
          const n = nodeAt(e).node;
          if (n >= 0) onZoom(n);
        }}
        onKeyDown={(e) => {
          if ((e.key === 'Escape' || e.key === 'Backspace') && parent[zoom]! >= 0) onZoom(parent[zoom]!);
        }}
      />
      {h && (
        <div className="flame-tip" style={{ left: Math.min(h.x + 12, width - 320), top: h.y + 14 }}>
          <strong>{frameLabel(tree, h.node)}</strong>
          <div>{frameWhere(tree, h.node)}</div>
          <div>
            {formatBytes(tree.bytes[h.node]!)} ({exactBytes(tree.bytes[h.node]!)}) in{' '}
            {formatCount(tree.count[h.node]!)} allocations,{' '}
            {((100 * tree.bytes[h.node]!) / Math.max(1, tree.total_bytes)).toFixed(1)}% of live memory
          </div>
        </div>
      )}
    </div>
  );
}

/** The allocations under the zoomed frame, largest first; a click pins one (and selects the entry shown). */
function Allocations({
  client,
  tree,
  node,
  view,
  update,
}: {
  client: EngineClient;
  tree: FlameTree;
  node: number;
  view: ViewState;
  update: Props['update'];
}) {
  const [list, setList] = useState<{ total: number; rows: FlameAllocation[] } | null>(null);
  useEffect(() => {
    let live = true;
    const at = { device: tree.device, entry: tree.after_entry, fullStacks: tree.full_stacks };
    client.query('flameAllocations', { ...at, node, limit: LISTED }).then((r) => live && setList(r));
    return () => {
      live = false;
    };
  }, [client, tree, node]);
  if (list === null) return null;
  return (
    <>
      <h4>
        Allocations under it: {formatCount(list.total)}
        {list.total > list.rows.length && ` (the ${list.rows.length} largest)`}
      </h4>
      <div className="flame-allocs">
        <table className="panel-table" aria-label="allocations under the zoomed frame">
          <tbody>
            {list.rows.map((r) => (
              <tr key={r.id} aria-selected={view.alloc === r.id}>
                <td>
                  <button
                    type="button"
                    className="link"
                    onClick={() => update({ alloc: r.id, entry: tree.after_entry })}
                  >
                    #{r.id}
                  </button>
                </td>
                <td className="num">
                  <Bytes n={r.bytes} />
                </td>
                <td>
                  {r.alloc_entry >= 0
                    ? `allocated at entry ${formatCount(r.alloc_entry)}`
                    : 'allocated before recording'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function Pinned({
  client,
  device,
  at,
  alloc,
  update,
}: {
  client: EngineClient;
  device: number;
  at: number;
  alloc: number | null;
  update: Props['update'];
}) {
  const [details, setDetails] = useState<(AllocationDetails & { offset: number }) | null>(null);
  useEffect(() => {
    if (alloc === null) setDetails(null);
    else
      client
        .query('details', { device, alloc, entry: Math.max(0, at) })
        .then(setDetails, () => setDetails(null));
  }, [client, device, alloc, at]);
  return <Details details={details} onEntry={(k) => update({ entry: k, tab: 'timeline' })} />;
}
