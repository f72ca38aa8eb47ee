/**
 * LiveIndex answers its first queries by one scan of the allocations (a command asking about the
 * dump and the peak never replays the whole trace) and later ones from checkpoints: both must give
 * the same ids, in the generator's odd cases too (ring-buffer overflow, frees still pending,
 * expandable segments, several streams, an OOM).
 */
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/generate.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { LiveIndex } from '../../../src/engine/model/live-index.js';
import { stateAfter, statesAfter } from '../../../src/engine/model/state-at.js';

const CASES = [
  { seed: 1 },
  { seed: 2, ringBufferOverflow: true },
  { seed: 3, pendingFrees: true },
  { seed: 4, expandableSegments: true, streams: 2, privatePool: true },
  { seed: 5, oom: true },
];

describe('LiveIndex: scanned and replayed answers agree', () => {
  for (const options of CASES)
    it(JSON.stringify(options), () => {
      const s = loadSnapshotBytes(generateSnapshotBytes({ events: 4000, ...options }).bytes);
      for (const d of s.devices) {
        const n = d.trace.length;
        const replayed = new LiveIndex(d.allocations, n);
        // Past its scanned queries: the rest come from checkpoints.
        for (let i = 0; i < 8; i++) replayed.aliveAfter(-1);
        for (const k of [-1, 0, 1, n >> 3, n >> 1, n - 2, n - 1, n + 5, d.totals.peakAllocatedAt]) {
          const scanned = new LiveIndex(d.allocations, n).aliveAfter(k);
          expect(Array.from(scanned)).toEqual(Array.from(replayed.aliveAfter(k)));
        }
        expect(new LiveIndex(d.allocations, n).aliveAfter(n - 1).length).toBeGreaterThan(0);
      }
    });
});

describe('many moments at once: the same states as one at a time', () => {
  for (const options of CASES)
    it(JSON.stringify(options), () => {
      const s = loadSnapshotBytes(generateSnapshotBytes({ events: 4000, ...options }).bytes);
      for (const d of s.devices) {
        const n = d.trace.length;
        const ks = [-1, 0, 1, 7, n >> 3, n >> 1, n >> 1, n - 2, n - 1, n + 5].sort((x, y) => x - y);
        const each = new LiveIndex(d.allocations, n).aliveAfterEach(ks);
        const batch = statesAfter(s, d, ks);
        ks.forEach((k, i) => {
          const one = new LiveIndex(d.allocations, n).aliveAfter(k);
          expect(Array.from(each[i]!)).toEqual(Array.from(one));
          expect(batch[i]).toEqual(stateAfter(s, d, k));
        });
      }
    });
});
