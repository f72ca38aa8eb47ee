import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { DeviceModel } from '../../../../src/engine/model/snapshot.js';
import { axisExtent, firstAtOrAfter } from '../../../../src/engine/views/timeline/timeline-axis.js';
import { type TimelineRequest, timelineOutline } from '../../../../src/engine/views/timeline/timeline-lod.js';

/**
 * The timeline's outline is read in one pass over the running totals, whether or not their
 * per-entry curves were walked: each column must show what the walked curves say (the entry of
 * its highest active bytes, else the state carried in, and its highest reserved bytes).
 */
function expected(d: DeviceModel, req: TimelineRequest) {
  const t = d.totals;
  const activeAt = (k: number) => (k < 0 ? t.start.active : t.active[k]!);
  const reservedAt = (k: number) => (k < 0 ? t.start.reserved : t.reserved[k]!);
  const columns = Math.max(1, Math.floor(req.columns));
  const step = (req.x1 - req.x0) / columns;
  const sample: number[] = [];
  const active: number[] = [];
  const reserved: number[] = [];
  let lo = firstAtOrAfter(d, req.axis, req.x0);
  for (let c = 0; c < columns; c++) {
    const hi = firstAtOrAfter(d, req.axis, req.x0 + (c + 1) * step);
    let best = lo - 1;
    let maxReserved = reservedAt(best);
    for (let k = lo; k < hi; k++) {
      if (activeAt(k) > activeAt(best)) best = k;
      maxReserved = Math.max(maxReserved, reservedAt(k));
    }
    sample.push(best);
    active.push(activeAt(best));
    reserved.push(maxReserved);
    lo = Math.max(lo, hi);
  }
  return { sample, active, reserved };
}

describe('the timeline outline', () => {
  const bytes = generateSnapshotBytes({ events: 30000, seed: 3 }).bytes;
  const walked = loadSnapshotBytes(bytes).devices[0]!;
  const n = walked.trace.length;

  for (const axis of ['entry', 'time'] as const) {
    const [x0, x1] = axisExtent(walked, axis);
    const span = x1 - x0;
    const windows: [string, number, number, number][] = [
      ['the whole trace', x0, x1, 700],
      ['a middle window', x0 + span / 3, x0 + span / 2, 97],
      ['more columns than entries', x0 + span / 2, x0 + span / 2 + (span * 20) / n, 300],
      ['before the first entry', x0 - span, x0 - span / 2, 10],
      ['past the last entry', x1 + span, x1 + 2 * span, 10],
      ['reaching past both ends', x0 - span / 4, x1 + span / 4, 333],
    ];
    for (const [name, from, to, columns] of windows)
      it(`${axis} axis, ${name}: the walked curves' figures, walked or not`, () => {
        const req = { axis, x0: from, x1: to, columns, rows: 400 };
        const want = expected(walked, req);
        const fresh = loadSnapshotBytes(bytes).devices[0]!;
        for (const d of [fresh, fresh, walked]) {
          const got = timelineOutline(d, req);
          expect(Array.from(got.sample)).toEqual(want.sample);
          expect(Array.from(got.active)).toEqual(want.active);
          expect(Array.from(got.reserved)).toEqual(want.reserved);
        }
      });
  }
});
