import { categoriesOf } from '../../../src/engine/analyses/categories/index.js';
import { citeWindowCycles } from '../../../src/engine/analyses/cycles/index.js';
import { diagnoseFileSoFar } from '../../../src/engine/analyses/diagnosis/index.js';
import { fragmentationOf } from '../../../src/engine/analyses/fragmentation/index.js';
import { gcBurstsOf } from '../../../src/engine/analyses/gc/index.js';
import { leaksOf } from '../../../src/engine/analyses/leaks/index.js';
import { oomReports } from '../../../src/engine/analyses/oom/index.js';
import { liveMemoryProfile } from '../../../src/engine/export/index.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/index.js';
import { allocationsUnder, type FlameTree, flameTree } from '../../../src/engine/views/flame/index.js';
import type { AnalysisQueries, FlameAt } from './analysis-protocol.js';
import { diagnosisStream, type PostPartial } from './diagnosis-stream.js';

type Handlers = {
  [K in keyof AnalysisQueries]: (
    args: AnalysisQueries[K]['args'],
    // null: asked by the worker itself (the diagnosis started after a load), no query to answer.
    id: K extends 'diagnosis' ? number | null : number,
  ) => AnalysisQueries[K]['result'] | Promise<AnalysisQueries[K]['result']>;
};

/**
 * The worker's side of the flame graph and the analysis panels: the engine's analyses, called
 * as the CLI calls them (default options), so the page shows the CLI's words and numbers. The
 * last flame tree is kept so listing a node's allocations does not rebuild it.
 */
export function analysisHandlers(
  current: () => Snapshot,
  deviceOf: (device: number) => DeviceModel,
  partial: PostPartial,
): Handlers {
  let last: { snapshot: Snapshot; key: string; tree: FlameTree } | undefined;
  const treeAt = ({ device, entry, fullStacks }: FlameAt): FlameTree => {
    const d = deviceOf(device);
    const at = entry ?? (d.trace.length > 0 ? d.totals.peakAllocatedAt : -1);
    const key = `${device}:${at}:${fullStacks}`;
    if (last === undefined || last.snapshot !== current() || last.key !== key)
      last = { snapshot: current(), key, tree: flameTree(current(), d, at, { fullStacks }) };
    return last.tree;
  };
  const diagnoses = diagnosisStream(partial);
  const with_ = <T>(device: number, f: (s: Snapshot, d: DeviceModel) => T): T =>
    f(current(), deviceOf(device));

  return {
    flame: (args) => ({ tree: treeAt(args) }),
    flameAllocations: ({ node, limit, ...at }) => {
      const tree = treeAt(at);
      const a = deviceOf(at.device).allocations;
      const ids = node >= 0 && node < tree.frame.length ? allocationsUnder(tree, node) : new Int32Array();
      const rows = [...ids]
        .sort((x, y) => a.size[y]! - a.size[x]!)
        .slice(0, limit)
        .map((id) => ({ id, bytes: a.size[id]!, alloc_entry: a.start[id]! }));
      return { total: ids.length, rows };
    },
    speedscope: ({ device, entry, name }) =>
      with_(device, (s, d) => JSON.stringify(liveMemoryProfile(s, d, entry, name))),
    leaks: ({ device, marker, range }) =>
      with_(device, (s, d) =>
        leaksOf(s, d, { ...(marker ? { marker } : {}), ...(range ? { window: { entries: range } } : {}) }),
      ),
    gc: ({ device, file = '', cycles = [] }) =>
      with_(device, (s, d) => {
        const r = gcBurstsOf(s, d);
        return { ...r, cycles: citeWindowCycles(s, file, [r], cycles)[0]! };
      }),
    frag: ({ device, entry }) => with_(device, (s, d) => fragmentationOf(s, d, { at: entry })),
    oom: ({ device, capacity, request }) =>
      with_(device, (s, d) => oomReports(s, d, capacity ?? undefined, request ?? 0)),
    categories: ({ device, points }) => with_(device, (s, d) => categoriesOf(s, d, points)),
    diagnosis: ({ file, cycles = [], capacity }, id) => {
      // Asked on landing (which device leads), by the Diagnosis tab and by the timeline's OOM
      // pane: computed once per file (and again when the run's cycles arrive or a capacity is given),
      // each finding sent as soon as its analysis answers.
      const s = current();
      const key = `${file}|${cycles.map((c) => c.file).join(',')}|${capacity ?? ''}`;
      const opts = { file, cycles, ...(capacity ? { capacity } : {}) };
      // Each partial answer is put in the producer's words where it is posted (engine-worker.ts).
      const steps = () => diagnoseFileSoFar(s, s.devices, opts);
      return diagnoses.answer(id, s, key, steps, () => isOpen(current, s));
    },
    diagnosisPace: (pace) => diagnoses.setPace(pace),
  };
}

/** Whether `s` is still the open snapshot (none is while the next file loads). */
function isOpen(current: () => Snapshot, s: Snapshot): boolean {
  try {
    return current() === s;
  } catch {
    return false;
  }
}
