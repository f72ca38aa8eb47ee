import { cellResult } from '../../../src/engine/analyses/run/index.js';
import { SnapshotError } from '../../../src/engine/base/index.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/index.js';
import { hasTime, stepMarkers, timePositions } from '../../../src/engine/views/timeline/index.js';
import type { Source } from './protocol.js';
import type { AllocCurve, RunQueries } from './run-protocol.js';

type Handlers = {
  [K in keyof RunQueries]: (
    args: RunQueries[K]['args'],
    id: number,
  ) => RunQueries[K]['result'] | Promise<RunQueries[K]['result']>;
};

/** The worker's side of the Run page: two files' curves on one axis, and dropped files' cells. */
export function runHandlers(
  current: () => Snapshot,
  deviceOf: (device: number) => DeviceModel,
  other: (source: Source, id: number) => Promise<Snapshot>,
  load: (source: Source, id: number) => Promise<Snapshot>,
): Handlers {
  return {
    curves: async ({ device, other: source, deviceB, points }, id) => {
      const a = current();
      const b = await other(source, id);
      const db = b.devices.find((d) => d.device === deviceB) ?? b.devices[0];
      if (db === undefined) throw new SnapshotError(`${source.name}: has no device`);
      // One axis for both: time when both traces have it, else entries.
      const axis = hasTime(deviceOf(device)) && hasTime(db) ? 'time' : 'entry';
      return {
        a: allocCurve(a, deviceOf(device), axis, points),
        b: allocCurve(b, db, axis, points),
      };
    },
    runCell: async ({ source }, id) => cellResult(await load(source, id)),
  };
}

function allocCurve(s: Snapshot, d: DeviceModel, axis: 'time' | 'entry', points: number): AllocCurve {
  const n = d.trace.length;
  const pos = axis === 'time' ? timePositions(d) : null;
  const at = (k: number) => (pos === null ? k : pos[k]! - pos[0]!);
  const buckets = Math.max(1, Math.min(points, n));
  const x = new Float64Array(buckets);
  const y = new Float64Array(buckets);
  const span = n > 0 ? at(n - 1) : 0;
  y.fill(-1);
  for (let k = 0; k < n; k++) {
    const b = span > 0 ? Math.min(buckets - 1, Math.floor((at(k) / span) * buckets)) : 0;
    const v = d.totals.allocated[k]!;
    if (v > y[b]!) {
      y[b] = v;
      x[b] = at(k);
    }
  }
  // Buckets no entry fell in are dropped (a gap in time is drawn as a straight line).
  const kept = [...y.keys()].filter((b) => y[b]! >= 0);
  const marks = stepMarkers(s, d, axis).map((m) => (pos === null ? m.x : m.x - pos[0]!));
  return {
    axis,
    x: Float64Array.from(kept, (b) => x[b]!),
    y: Float64Array.from(kept, (b) => y[b]!),
    firstStep: marks.length > 0 ? Math.min(...marks) : null,
  };
}
