import { lowerBound } from '../../model/lower-bound.js';
import type { Annotation, DeviceModel, Snapshot } from '../../model/snapshot.js';

/**
 * The trace entries that fall inside record_function annotations PyTorch emits for the optimizer
 * (`Optimizer.step#…`, `Optimizer.zero_grad#…`), and where the first `ProfilerStep#N` begins:
 * what annotations say about a tensor when its stack does not.
 */
export interface EntryWindows {
  optimizerStep: [number, number][];
  zeroGrad: [number, number][];
  /** First entry at or after the first ProfilerStep START; -1 when there is none. */
  firstStep: number;
  inside(spans: [number, number][], i: number): boolean;
  /** The last entry of the span holding `i` (call only when inside). */
  endOf(spans: [number, number][], i: number): number;
}

export function annotationWindows(s: Snapshot, d: DeviceModel): EntryWindows {
  const t = d.trace;
  const timed = t.length > 0 && !Number.isNaN(t.timeUs[0]!);
  const mine = timed
    ? s.annotations.filter((a) => (a.device === d.device || a.device < 0) && !Number.isNaN(a.timeUs))
    : [];
  const firstStep = mine.filter((a) => a.stage === 'START' && a.name.startsWith('ProfilerStep#'));
  const first = firstStep.length > 0 ? Math.min(...firstStep.map((a) => a.timeUs)) : Number.NaN;
  return {
    optimizerStep: spans(t.timeUs, mine, (n) => n.startsWith('Optimizer.step#')),
    zeroGrad: spans(t.timeUs, mine, (n) => n.startsWith('Optimizer.zero_grad#')),
    firstStep: Number.isNaN(first) ? -1 : lowerBound(t.timeUs, first),
    inside: (list, i) => containing(list, i) >= 0,
    endOf: (list, i) => list[containing(list, i)]![1],
  };
}

/** START/END pairs of the matching annotations (each START closed by the next END of its name). */
function spans(times: Float64Array, all: Annotation[], match: (name: string) => boolean): [number, number][] {
  const open = new Map<string, number>();
  const out: [number, number][] = [];
  for (const a of [...all].filter((x) => match(x.name)).sort((x, y) => x.timeUs - y.timeUs)) {
    if (a.stage === 'START') open.set(a.name, a.timeUs);
    else if (a.stage === 'END' && open.has(a.name)) {
      const lo = lowerBound(times, open.get(a.name)!);
      const hi = lowerBound(times, a.timeUs + 1) - 1;
      open.delete(a.name);
      if (lo <= hi) out.push([lo, hi]);
    }
  }
  return out.sort((x, y) => x[0] - y[0]);
}

function containing(list: [number, number][], i: number): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = list[mid]!;
    if (i < a) hi = mid - 1;
    else if (i > b) lo = mid + 1;
    else return mid;
  }
  return -1;
}
