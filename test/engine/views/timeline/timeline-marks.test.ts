import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { timelineLod } from '../../../../src/engine/views/timeline/timeline-lod.js';

/** Search matches colour the merged runs they fall in, so no highlighted match hides in a merge. */
describe('timeline level of detail with marked allocations', () => {
  const s = loadSnapshotBytes(generateSnapshotBytes({ events: 4000, seed: 17 }).bytes);
  const d = s.devices[0]!;
  const n = d.trace.length;
  // One column per entry and few rows: most allocations are under a row and merged.
  const req = { axis: 'entry' as const, x0: 0, x1: n, columns: n, rows: 8 };
  const plain = timelineLod(d, req);

  /** Runs of column c whose colour comes from allocation id. */
  const toned = (lod: typeof plain, c: number, id: number) => {
    let hits = 0;
    for (let r = 0; r < lod.runs; r++) {
      if (lod.runX0[r]! <= c && c < lod.runX1[r]! && lod.runAlloc[r] === -1 && lod.runTone[r] === id) hits++;
    }
    return hits;
  };

  it('a marked allocation merged with larger ones gives its run its colour', () => {
    const a = d.allocations;
    const minBytes = plain.yMax / req.rows;
    let checked = 0;
    for (let c = 0; c < n && checked < 5; c += 97) {
      const k = plain.sample[c]!;
      // A small allocation live at the column's sample that the unmarked merge does not colour by.
      const id = [...d.live.aliveAfter(k)].find((x) => a.size[x]! < minBytes / 4 && toned(plain, c, x) === 0);
      if (id === undefined) continue;
      const marked = new Uint8Array(a.count);
      marked[id] = 1;
      const lod = timelineLod(d, req, marked);
      expect(toned(lod, c, id)).toBe(1);
      expect(lod.yMax).toBe(plain.yMax);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
