import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import {
  allocationStreams,
  deviceStreams,
  streamView,
} from '../../../../src/engine/analyses/summary/stream-view.js';
import { allocationAt, stackAfter } from '../../../../src/engine/derived/state/live-order.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { timelineLod } from '../../../../src/engine/views/timeline/timeline-lod.js';

/** One stream's view of a device, on a generated trace that plants work on two extra streams. */
describe('stream views for the timeline', () => {
  const s = loadSnapshotBytes(generateSnapshotBytes({ events: 8000, seed: 31, streams: 2 }).bytes);
  const d = s.devices[0]!;
  const streams = deviceStreams(s, d);
  const views = streams.map((x) => streamView(s, d, x));
  const owner = allocationStreams(s, d);
  const n = d.trace.length;

  it('finds the default stream and the two planted ones', () => {
    expect(streams.length).toBe(3);
    expect(streams[0]).toBe(0);
  });

  it('splits the device totals: the streams’ active and reserved bytes add up after every entry', () => {
    for (let k = 0; k < n; k++) {
      const active = views.reduce((sum, v) => sum + v.totals.active[k]!, 0);
      const reserved = views.reduce((sum, v) => sum + v.totals.reserved[k]!, 0);
      if (active !== d.totals.active[k] || reserved !== d.totals.reserved[k]) {
        expect({ k, active, reserved }).toEqual({
          k,
          active: d.totals.active[k],
          reserved: d.totals.reserved[k],
        });
      }
    }
    for (const v of views) {
      expect(Math.min(...v.totals.reserved)).toBeGreaterThanOrEqual(0);
      // Each planted stream holds memory at some point, and never all of the device's.
      expect(Math.max(...v.totals.active)).toBeGreaterThan(0);
      expect(v.totals.active.some((x, k) => x < d.totals.active[k]!)).toBe(true);
    }
  });

  it('a stream’s active bytes are its live allocations, and only they can be picked', () => {
    for (const [i, v] of views.entries()) {
      for (const k of [0, Math.floor(n / 3), Math.floor(n / 2), n - 1]) {
        const live = [...stackAfter(d, k)].filter((id) => owner[id] === streams[i]);
        const bytes = live.reduce((sum, id) => sum + d.allocations.size[id]!, 0);
        expect(v.totals.active[k]).toBe(bytes);
        for (let y = 0; y < bytes; y += Math.max(1, Math.floor(bytes / 50))) {
          expect(owner[allocationAt(v, k, y)]).toBe(streams[i]);
        }
        expect(allocationAt(v, k, bytes)).toBe(-1);
      }
    }
  });

  it('the level of detail of a stream stacks only that stream', () => {
    const v = views[1]!;
    const lod = timelineLod(v, { axis: 'entry', x0: 0, x1: n, columns: 200, rows: 100 });
    expect(lod.runs).toBeGreaterThan(0);
    for (let r = 0; r < lod.runs; r++) {
      if (lod.runAlloc[r]! >= 0) expect(owner[lod.runAlloc[r]!]).toBe(streams[1]);
    }
    for (let c = 0; c < lod.columns; c++)
      expect(lod.active[c]).toBe(v.totals.active[lod.sample[c]!] ?? v.totals.start.active);
  });
});
