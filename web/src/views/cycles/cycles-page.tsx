import { useEffect, useMemo, useState } from 'react';
import type {
  CycleGraph,
  CycleTensorReport,
  WindowCycle,
} from '../../../../src/engine/analyses/cycles/index.js';
import {
  allocationText,
  burstText,
  cycleTitle,
  heldText,
  layoutCycle,
  recordedSiteText,
  tensorText,
  wallClockText,
  windowText,
} from '../../../../src/engine/analyses/cycles/index.js';
import { formatBytes } from '../../../../src/engine/base/index.js';
import type { ServedCycle } from '../../../../src/wire/served-cycle.js';
import { embeddedCycles, embeddedReport } from '../../embedded-data.js';
import type { ViewState } from '../../url-state.js';
import { EMPTY_FORM } from '../table-filters.js';
import './cycles.css';

type Listed = Extract<ServedCycle, { graph: CycleGraph }>;

/**
 * The served run's recorded cycles (GET api/cycles), asked only of a server that serves a run
 * (`hasRun`: useServedRun's; a plain static host is never asked), or those a report page
 * carries: null while asked, [] when none.
 */
export function useServedCycles(hasRun: boolean | undefined): ServedCycle[] | null {
  const [cycles, setCycles] = useState<ServedCycle[] | null>(null);
  useEffect(() => {
    if (hasRun !== true) return setCycles(hasRun === undefined ? null : []);
    let live = true;
    const asked =
      embeddedReport() !== null
        ? embeddedCycles().then((list) => ({ cycles: list }))
        : fetch('api/cycles').then((res) =>
            res.ok ? (res.json() as Promise<{ cycles: ServedCycle[] }>) : { cycles: [] },
          );
    asked.then((body) => live && setCycles(body.cycles)).catch(() => live && setCycles([]));
    return () => {
      live = false;
    };
  }, [hasRun]);
  return cycles;
}

/** The recorded cycles whose window is the served file `file` (what its GC finding cites). */
export function windowCyclesOf(cycles: ServedCycle[] | null, file: string | null): WindowCycle[] {
  return (cycles ?? [])
    .filter((c): c is Listed => 'graph' in c && c.snapshot !== null && c.snapshot === file)
    .map((c) => ({ file: c.name, graph: c.graph }));
}

interface Props {
  cycles: ServedCycle[] | null;
  /** Opens a served snapshot with this view (the allocation selected, or the GC burst's entries). */
  openIn: (file: string, patch: Partial<ViewState>) => void;
}

/**
 * The reference cycles `memlens record --cycles` recorded: a list by rank and time with the bytes
 * each held and its path in words; the chosen one's object graph (labelled references, tensors
 * with their sizes) and its tensors, each linked to its allocation and its GC burst in the
 * snapshot of its window.
 */
export function CyclesPage({ cycles, openIn }: Props) {
  const [chosen, setChosen] = useState(0);
  if (cycles === null) return <main className="cycles-page">reading the recorded cycles…</main>;
  const listed = cycles.filter((c): c is Listed => 'graph' in c);
  const bad = cycles.filter((c) => 'error' in c);
  const current = listed[Math.min(chosen, listed.length - 1)];
  return (
    <main className="cycles-page">
      <h2>Recorded reference cycles</h2>
      {listed.length === 0 && (
        <p>No cycle files in this run (memlens record --cycles writes them to cycles/).</p>
      )}
      {bad.map((c) => (
        <p key={c.name} className="warn">
          {c.name}: {'error' in c ? c.error : ''}
        </p>
      ))}
      <div className="cycles-layout">
        <ol className="cycle-list" aria-label="cycles">
          {listed.map((c, i) => (
            <li key={c.name}>
              <button
                type="button"
                aria-pressed={c === current}
                data-cycle={c.name}
                onClick={() => setChosen(i)}
              >
                <span className="cycle-bytes">{formatBytes(c.report.bytes)}</span> {cycleTitle(c.report)}
                <span className="cycle-path">{c.report.path_words ?? 'no tensor'}</span>
              </button>
            </li>
          ))}
        </ol>
        {current && <CycleDetail key={current.name} c={current} openIn={openIn} />}
      </div>
    </main>
  );
}

function CycleDetail({ c, openIn }: { c: Listed; openIn: Props['openIn'] }) {
  const r = c.report;
  return (
    <section className="cycle-detail" aria-label="cycle">
      <h3>
        {cycleTitle(r)}, at {wallClockText(r.time_us)}
      </h3>
      <p>
        <strong>{heldText(r)}</strong>
      </p>
      <p className="cycle-path">{r.path_words}</p>
      <p>
        {windowText({ ...r, snapshot: r.snapshot && { ...r.snapshot, file: c.snapshot ?? r.snapshot.file } })}
      </p>
      <CycleGraphView g={c.graph} />
      <table className="cycle-tensors">
        <thead>
          <tr>
            <th>tensor</th>
            <th>path from the cycle</th>
            <th>allocation in the window</th>
            <th>GC burst</th>
          </tr>
        </thead>
        <tbody>
          {r.tensors.map((t) => (
            <TensorRow key={t.id} t={t} snapshot={c.snapshot} openIn={openIn} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function TensorRow({
  t,
  snapshot,
  openIn,
}: {
  t: CycleTensorReport;
  snapshot: string | null;
  openIn: Props['openIn'];
}) {
  const a = t.allocation;
  const b = t.burst;
  const recorded = a?.site ? null : recordedSiteText(t);
  return (
    <tr data-tensor={t.id}>
      <td>
        #{t.id} {tensorText(t)}
      </td>
      <td>{t.path_words}</td>
      <td>
        {a !== null && snapshot !== null ? (
          <LinkTo
            data={{ 'data-alloc': a.id }}
            title="the snapshot's timeline with this allocation selected"
            go={() =>
              openIn(snapshot, {
                tab: 'timeline',
                device: a.device,
                alloc: a.id,
                entry: a.alloc_entry >= 0 ? a.alloc_entry : a.free_entry,
              })
            }
            text={allocationText(a)}
          />
        ) : (
          <span className="dim">{t.allocation_reason}</span>
        )}
        {recorded !== null && <div className="dim">{recorded}</div>}
      </td>
      <td>
        {b !== null && snapshot !== null && a !== null ? (
          <LinkTo
            data={{ 'data-burst': b.entry }}
            title="the Events table on the burst's frees"
            go={() =>
              openIn(snapshot, {
                tab: 'events',
                device: a.device,
                entry: b.entry,
                table: {
                  kind: 'events',
                  form: { ...EMPTY_FORM, rangeColumn: 'id', min: String(b.entry), max: String(b.last_entry) },
                  sort: null,
                },
              })
            }
            text={burstText(b)}
          />
        ) : (
          <span className="dim">{t.burst_reason}</span>
        )}
      </td>
    </tr>
  );
}

function LinkTo(p: { data: Record<string, number>; title: string; go: () => void; text: string }) {
  return (
    <button type="button" className="link" {...p.data} title={p.title} onClick={p.go}>
      {p.text}
    </button>
  );
}

/** The object graph: boxes, labelled references, tensors filled with their sizes, the cycle's edges bold. */
function CycleGraphView({ g }: { g: CycleGraph }) {
  const l = useMemo(() => layoutCycle(g), [g]);
  return (
    <div className="cycle-graph">
      {l.hidden > 0 && (
        <p className="hint" data-hidden={l.hidden}>
          {l.nodes.length} of {l.nodes.length + l.hidden} objects drawn: the paths from the cycle to its
          largest tensors.
        </p>
      )}
      <svg width={l.width} height={l.height} role="img" aria-label="object graph of the cycle">
        <defs>
          <marker
            id="cycle-arrow"
            viewBox="0 0 8 8"
            refX="8"
            refY="4"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L8,4 L0,8 z" />
          </marker>
        </defs>
        {l.edges.map((e) => (
          <g key={`${e.from}-${e.to}-${e.label}`} className={e.on_cycle ? 'edge on-cycle' : 'edge'}>
            <path d={e.d} markerEnd="url(#cycle-arrow)" />
            <text x={e.lx} y={e.ly} textAnchor="middle">
              {e.label}
            </text>
          </g>
        ))}
        {l.nodes.map((n) => (
          <g
            key={n.id}
            className={`node${n.size !== null ? ' tensor' : ''}${n.on_cycle ? ' on-cycle' : ''}`}
            data-node={n.id}
          >
            <title>{n.title}</title>
            <rect x={n.x} y={n.y} width={n.w} height={n.h} rx={4} />
            <text x={n.x + n.w / 2} y={n.y + 16} textAnchor="middle">
              {n.text}
            </text>
            {n.size !== null && (
              <text className="size" x={n.x + n.w / 2} y={n.y + 32} textAnchor="middle">
                {n.size}
              </text>
            )}
          </g>
        ))}
      </svg>
    </div>
  );
}
