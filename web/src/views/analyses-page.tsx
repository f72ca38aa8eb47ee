import type { ReactNode } from 'react';
import type { WindowCycle } from '../../../src/engine/analyses/cycles/index.js';
import { hex } from '../format.js';
import { PANELS, type Panel, type ViewState } from '../url-state.js';
import type { EngineClient } from '../worker/client.js';
import type { DeviceInfo, Queries, QueryName } from '../worker/protocol.js';
import type { Select } from './analyses/bits.js';
import { CategoriesPanel } from './analyses/categories-panel.js';
import { ComparePanel } from './analyses/compare-panel.js';
import { FragPanel } from './analyses/frag-panel.js';
import { GcPanel } from './analyses/gc-panel.js';
import { LeaksPanel } from './analyses/leaks-panel.js';
import { OomPanel } from './analyses/oom-panel.js';
import { useQuery } from './analyses/use-query.js';
import { WhatIfPanel } from './analyses/what-if-panel.js';
import { EMPTY_FORM } from './table-filters.js';

interface Props {
  client: EngineClient;
  device: DeviceInfo;
  view: ViewState;
  update: (patch: Partial<ViewState>) => void;
  /** The served run's recorded cycles of this snapshot's window, cited by the GC panel. */
  cycles?: WindowCycle[];
}

const TITLES: Record<Panel, string> = {
  leaks: 'Leaks',
  gc: 'GC bursts',
  frag: 'Fragmentation',
  oom: 'OOM',
  categories: 'Categories',
  whatif: 'What-if',
  compare: 'Compare',
};

/**
 * The CLI's analyses (leaks, gc, frag, oom, categories) as panels, computed in the worker by the
 * same engine calls. An entry a panel names is a link: it selects that entry and opens the timeline.
 */
export function AnalysesPage({ client, device, view, update, cycles = [] }: Props) {
  const select = selectIn(update);
  return (
    <main className="analyses-page">
      <div className="subtabs" role="tablist" aria-label="analyses">
        {PANELS.map((p) => (
          <button
            key={p}
            type="button"
            role="tab"
            aria-selected={view.panel === p}
            onClick={() => update({ panel: p })}
          >
            {TITLES[p]}
          </button>
        ))}
      </div>
      <div className="panel" role="tabpanel" aria-label={TITLES[view.panel]}>
        <PanelBody
          key={view.panel}
          client={client}
          device={device}
          view={view}
          update={update}
          select={select}
          cycles={cycles}
        />
      </div>
    </main>
  );
}

/**
 * What a link in an analysis does to the view: selects an entry or allocation on the timeline,
 * or opens a table filtered to what it names. The Diagnosis tab's links use the same.
 */
export function selectIn(update: (patch: Partial<ViewState>) => void): Select {
  return {
    entry: (k) => update({ entry: k, tab: 'timeline' }),
    alloc: (alloc, entry) => update({ alloc, entry, tab: 'timeline' }),
    segment: (segment, entry) => update({ segment, entry, tab: 'timeline' }),
    blocksThrough: (frame) =>
      update({ tab: 'blocks', table: { kind: 'blocks', form: { ...EMPTY_FORM, frame }, sort: null } }),
    blocksIn: (from, to) =>
      update({
        tab: 'blocks',
        table: { kind: 'blocks', form: { ...EMPTY_FORM, address: `${hex(from)}..${hex(to)}` }, sort: null },
      }),
    eventsIn: (first, last) =>
      update({
        tab: 'events',
        table: {
          kind: 'events',
          form: { ...EMPTY_FORM, rangeColumn: 'id', min: String(first), max: String(last) },
          sort: null,
        },
      }),
  };
}

function PanelBody({ client, device, view, update, select, cycles = [] }: Props & { select: Select }) {
  const d = device.device;
  switch (view.panel) {
    case 'leaks':
      return <LeaksPanel client={client} device={d} select={select} />;
    case 'gc':
      return (
        <Query
          client={client}
          q="gc"
          args={{ device: d, ...(cycles.length > 0 ? { file: view.file ?? '', cycles } : {}) }}
          render={(r) => <GcPanel r={r} select={select} />}
        />
      );
    case 'frag':
      return (
        <Query
          client={client}
          q="frag"
          args={{ device: d, entry: view.entry ?? device.entries - 1 }}
          render={(r) => <FragPanel r={r} select={select} />}
        />
      );
    case 'oom':
      return <OomPanel client={client} device={d} file={view.file} select={select} />;
    case 'categories':
      return (
        <Query
          client={client}
          q="categories"
          args={{ device: d, points: 400 }}
          render={(r) => <CategoriesPanel r={r} select={select} />}
        />
      );
    case 'whatif':
      return (
        <WhatIfPanel
          client={client}
          device={d}
          set={view.set}
          onSet={(set) => update({ set })}
          select={select}
        />
      );
    case 'compare':
      return (
        <ComparePanel
          client={client}
          device={d}
          file={view.file}
          compare={view.compare}
          onCompare={(compare) => update({ compare })}
          select={select}
        />
      );
  }
}

/** Asks the worker one query and renders its answer, or says it is computing or failed. */
function Query<K extends QueryName>(p: {
  client: EngineClient;
  q: K;
  args: Queries[K]['args'];
  render: (v: Queries[K]['result']) => ReactNode;
}) {
  const answer = useQuery(p.client, p.q, p.args);
  if (answer.status === 'loading') return <p className="hint">computing…</p>;
  if (answer.status === 'error') return <p className="error">{answer.message}</p>;
  return <>{p.render(answer.value)}</>;
}
