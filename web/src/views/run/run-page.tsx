import { useMemo, useState } from 'react';
import type { Outlier } from '../../../../src/engine/analyses/run/index.js';
import {
  FIGURE_WORDS,
  growthHeadline,
  oomHeadline,
  outlierHeadline,
  RUN_FIGURES,
  type RunFigure,
  type RunRow,
  runComparable,
  runLead,
} from '../../../../src/engine/analyses/run/index.js';
import { omittedReason } from '../../embedded-data.js';
import type { ViewState } from '../../url-state.js';
import type { EngineClient } from '../../worker/client.js';
import { SiteDiff } from '../analyses/compare-panel.js';
import { selectIn } from '../analyses-page.js';
import { Heatmap } from './heatmap.js';
import { PairCurves } from './pair-curves.js';
import { RankLines } from './rank-lines.js';
import type { RunData } from './run-data.js';
import { runGrid } from './run-grid.js';
import './run.css';
import { plural } from '../../../../src/engine/base/index.js';

interface Props {
  client: EngineClient;
  data: RunData | null;
  /** The server is still decoding: files done of those found. */
  progress: { done: number; total: number } | null;
  view: ViewState;
  update: (patch: Partial<ViewState>) => void;
  /** Opens snapshot `index` of the report (its Diagnosis tab). */
  onOpen: (index: number) => void;
  /** Opens snapshot `a` and compares it with `b` on this page. */
  onCompare: (a: number, b: number) => void;
  /** The file open in the worker, once loaded (the pair's A must be). */
  loaded: { file: string; device: number } | null;
}

const FIGURES = Object.keys(RUN_FIGURES) as RunFigure[];

/**
 * Where a run lands: ranks × steps at a glance (heatmap of the chosen figure, each rank's line),
 * what stands out, grows or ran out of memory in words, each linked to its snapshot; a click on
 * a cell opens that snapshot, two shift-clicked cells are compared here on one axis.
 */
export function RunPage({ client, data, progress, view, update, onOpen, onCompare, loaded }: Props) {
  const [pending, setPending] = useState<number | null>(null);
  const grid = useMemo(() => (data === null ? null : runGrid(data.report, view.figure)), [data, view.figure]);
  if (data === null || grid === null)
    return (
      <main className="run-page">
        <p className="hint" role="status">
          {progress ? `decoding the run: ${progress.done} of ${progress.total} files…` : 'reading the run…'}
        </p>
      </main>
    );
  const { report } = data;
  const indexOf = (file: string) => report.snapshots.findIndex((s) => s.file === file);
  const pick = (index: number) => {
    if (pending === null || pending === index) return setPending(index);
    setPending(null);
    onCompare(pending, index);
  };
  const names = data.sources.map((s) => s.name);
  const pairA = view.compare === null ? -1 : names.indexOf(view.file ?? '');
  const pairB = view.compare === null ? -1 : names.indexOf(view.compare);
  const windows = new Set(report.rows.filter((r) => r.kind === 'step').map((r) => r.steps?.first)).size;
  const marked = new Set([
    ...report.outliers.map((o) => o.lane),
    ...report.growth.flatMap((g) => g.ranks.map((r) => r.lane)),
  ]);
  return (
    <main className="run-page" aria-label="run">
      <h1>
        Run {report.root}: {grid.ranks.length} rank{grid.ranks.length === 1 ? '' : 's'}
        {windows > 0
          ? ` × ${windows} step window${windows === 1 ? '' : 's'}`
          : `, ${report.snapshots.length} dumps without a step`}
        {report.ooms.length > 0 && `, ${report.ooms.length} OOM`}
        <span className="dim"> · {report.layout} layout</span>
        {data.watching && <span className="watching"> · watching for new files</span>}
        {progress && (
          <span className="dim">
            {' '}
            · decoding {progress.done} of {progress.total} files
          </span>
        )}
      </h1>
      {report.layout_doubts.map((d) => (
        <p key={d} className="hint layout-doubt">
          {d}
        </p>
      ))}
      <Findings
        report={report}
        rowsOf={report.rows}
        indexOf={indexOf}
        onOpen={onOpen}
        onCompare={onCompare}
      />
      <div className="figure-choice">
        {FIGURES.map((f) => (
          <button
            key={f}
            type="button"
            aria-pressed={view.figure === f}
            onClick={() => update({ figure: f })}
          >
            {FIGURE_WORDS[f]}
          </button>
        ))}
        <span className="hint">
          click a cell: open that snapshot · shift-click two cells: compare them
          {pending !== null && ` (A: ${names[pending]} chosen, shift-click B)`}
        </span>
      </div>
      <Heatmap
        grid={grid}
        figure={view.figure}
        picked={[pending, pairA, pairB].filter((i): i is number => i !== null && i >= 0)}
        onOpen={(c) => onOpen(c.snapshot)}
        onPick={(c) => pick(c.snapshot)}
        absent={(i) => omittedReason(names[i] ?? '')}
      />
      <RankLines grid={grid} figure={view.figure} marked={marked} />
      {report.unplaced.length > 0 && (
        <p className="hint">
          {plural(report.unplaced.length, 'file')} {report.unplaced.length === 1 ? 'names' : 'name'} neither a
          rank nor a step: {report.unplaced.slice(0, 3).join(', ')}
          {report.unplaced.length > 3 ? ', …' : ''}
        </p>
      )}
      {report.shared.map((c) => (
        <p key={c.where} className="hint">
          {c.where} holds {c.files.length} dumps, each a line of its own:{' '}
          {c.files.map((f) => `${f.file} (${f.lane})`).join(', ')}
        </p>
      ))}
      {report.not_read.map((n) => (
        <p key={n.path} className="error">
          {n.path}: not read: {n.reason}
        </p>
      ))}
      {report.snapshots
        .filter((s) => s.error !== undefined)
        .map((s) => (
          <p key={s.file} className="error">
            {s.file}: {s.error}
          </p>
        ))}
      {report.skipped.length > 0 && (
        <details className="hint">
          <summary>{plural(report.skipped.length, 'other file')} skipped: not snapshots</summary>
          <ul>
            {report.skipped.map((s) => (
              <li key={s.path}>
                {s.path}: {s.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
      {pairA >= 0 && pairB >= 0 && (
        <Pair client={client} data={data} a={pairA} b={pairB} view={view} update={update} loaded={loaded} />
      )}
    </main>
  );
}

/** The findings as sentences (the CLI's words), each with links to the snapshots it names. */
function Findings({
  report,
  rowsOf,
  indexOf,
  onOpen,
  onCompare,
}: {
  report: RunData['report'];
  rowsOf: RunRow[];
  indexOf: (file: string) => number;
  onOpen: (i: number) => void;
  onCompare: (a: number, b: number) => void;
}) {
  /** The window at `step` of the lane the table and the finding name (`rank 0`, `rank 0 #2`). */
  const cellAt = (label: string, step: number): number => {
    const row = rowsOf.find((r) => r.kind === 'step' && r.lane_label === label && r.steps?.first === step);
    return row === undefined ? -1 : indexOf(row.file);
  };
  const previousStep = (o: Outlier): number | undefined =>
    rowsOf
      .filter((r) => r.kind === 'step' && r.lane === o.lane && r.steps!.first < o.steps.first)
      .map((r) => r.steps!.first)
      .sort((x, y) => y - x)[0];
  const nothing = report.outliers.length === 0 && report.growth.length === 0 && report.ooms.length === 0;
  const lead = runLead(report);
  const leadCell = lead?.file == null ? -1 : indexOf(lead.file);
  return (
    <section className="run-findings" aria-label="findings">
      {lead && (
        <p className={`run-worst ${lead.kind}`}>
          <strong>Worst first:</strong> {lead.headline}{' '}
          {leadCell >= 0 && <Link onClick={() => onOpen(leadCell)}>open its snapshot</Link>}
        </p>
      )}
      {nothing && runComparable(rowsOf) && (
        <p className="clean">✓ Nothing stands out: no rank departs from its step, no site grows, no OOM.</p>
      )}
      {nothing && !runComparable(rowsOf) && (
        <p className="hint">
          Nothing to compare yet: a rank is compared with the other ranks of a step (3 or more) and with its
          own step windows (3 or more). Shift-click two cells to compare them.
        </p>
      )}
      <ul>
        {report.ooms.map((o) => (
          <li key={o.file} className="oom">
            {oomHeadline(o)} <Link onClick={() => onOpen(indexOf(o.file))}>open the dump</Link>
          </li>
        ))}
        {report.outliers.map((o) => {
          const here = cellAt(o.lane_label, o.steps.first);
          const other =
            o.against_lane !== null
              ? cellAt(o.against_lane, o.steps.first)
              : cellAt(o.lane_label, previousStep(o) ?? Number.NaN);
          return (
            <li key={`${o.axis}:${o.lane}:${o.figure}:${o.steps.first}`} className="outlier">
              {outlierHeadline(o)} <Link onClick={() => onOpen(here)}>open</Link>
              {other >= 0 && (
                <>
                  {' '}
                  <Link onClick={() => onCompare(other, here)}>
                    compare with {o.against_lane ?? 'the window before'}
                  </Link>
                </>
              )}
            </li>
          );
        })}
        {report.growth.map((g) => {
          const r = g.ranks[0]!;
          const first = cellAt(r.lane_label, r.steps[0]!);
          const last = cellAt(r.lane_label, r.steps.at(-1)!);
          return (
            <li key={g.frames.map((f) => `${f.filename}:${f.line}`).join('|')} className="growth">
              {growthHeadline(g)}{' '}
              {first >= 0 && last >= 0 && (
                <Link onClick={() => onCompare(first, last)}>
                  compare {r.lane_label}'s first and last window
                </Link>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function Link({ onClick, children }: { onClick: () => void; children: React.ReactNode }) {
  return (
    <button type="button" className="link" onClick={onClick}>
      {children}
    </button>
  );
}

/** Two cells compared: both allocation curves on one axis, then the site diff (B − A). */
function Pair({
  client,
  data,
  a,
  b,
  view,
  update,
  loaded,
}: {
  client: EngineClient;
  data: RunData;
  a: number;
  b: number;
  view: ViewState;
  update: (patch: Partial<ViewState>) => void;
  loaded: Props['loaded'];
}) {
  const { report, sources } = data;
  const deviceOf = (i: number) => report.rows.find((r) => r.file === report.snapshots[i]!.file)?.device ?? 0;
  const label = (i: number) => {
    const s = report.snapshots[i]!;
    const step = s.kind === 'oom' ? 'OOM dump' : s.step === null ? 'dump' : `step ${s.step}`;
    return `rank ${s.rank ?? deviceOf(i)}, ${step}`;
  };
  const ready = loaded !== null && loaded.file === sources[a]!.name;
  return (
    <section className="run-pair" aria-label="compare two cells">
      <h2>
        Compare A: {label(a)} with B: {label(b)} <Link onClick={() => update({ compare: null })}>close</Link>
      </h2>
      {!ready ? (
        <p className="hint">opening A…</p>
      ) : (
        <>
          <PairCurves
            client={client}
            device={loaded.device}
            labelA={label(a)}
            other={sources[b]!}
            deviceB={deviceOf(b)}
            labelB={label(b)}
          />
          {/* B is the pair's cell, served or dropped: the worker decodes either beside A. */}
          <SiteDiff
            client={client}
            device={loaded.device}
            file={view.file}
            source={sources[b]!}
            select={selectIn(update)}
          />
        </>
      )}
    </section>
  );
}
