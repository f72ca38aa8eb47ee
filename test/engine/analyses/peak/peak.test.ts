import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { liveAllocated, peakOf } from '../../../../src/engine/analyses/peak/peak.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

/**
 * The live set the model reconstructs must add up to the allocated curve it rebuilt separately
 * from the totals: two independent derivations of the same number, at the peak and anywhere.
 */
describe.skipIf(files.length === 0)('peak: live allocations add up to the allocated curve (corpus)', () => {
  for (const file of files) {
    it(file, () => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        const p = peakOf(s, d, { top: 1_000_000 });
        expect(p.groups.reduce((n, g) => n + g.bytes, 0)).toBe(p.allocated_bytes);
        expect(p.allocated_bytes).toBe(d.totals.peak.allocated);
        const n = d.trace.length;
        for (const at of [-1, Math.floor(n / 3), Math.floor((2 * n) / 3), n - 1].filter((k) => k < n)) {
          const ids = liveAllocated(d, at);
          const sum = ids.reduce((acc, id) => acc + d.allocations.size[id]!, 0);
          expect(sum, `${file} after entry ${at}`).toBe(
            at >= 0 ? d.totals.allocated[at] : d.totals.start.allocated,
          );
        }
      }
    });
  }
});

describe('peak on a generated training loop', () => {
  it('names the user code that held the most at the peak', () => {
    const { bytes, expected } = generateSnapshotBytes({ events: 6000, seed: 31 });
    const s = loadSnapshotBytes(bytes);
    const p = peakOf(s, s.devices[0]!, { top: 5 });
    expect(p.allocated_bytes).toBe(expected.devices[0]!.trace_peak_allocated_bytes);
    expect(p.groups.length).toBeGreaterThan(0);
    expect(p.groups[0]!.frames.every((f) => f.filename.endsWith('.py'))).toBe(true);
    expect(p.groups[0]!.frames.some((f) => f.filename.includes('site-packages'))).toBe(false);
    const full = peakOf(s, s.devices[0]!, { top: 5, fullStacks: true });
    expect(full.groups[0]!.frames.length).toBeGreaterThanOrEqual(p.groups[0]!.frames.length);
  });

  it('--at and --time pick the state after that entry', () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 3000, seed: 32 }).bytes);
    const d = s.devices[0]!;
    const p = peakOf(s, d, { at: 1000 });
    expect(p.after_entry).toBe(1000);
    expect(p.allocated_bytes).toBe(d.totals.allocated[1000]);
    const byTime = peakOf(s, d, { timeUs: d.trace.timeUs[1000]! });
    expect(byTime.after_entry).toBeGreaterThanOrEqual(1000);
    expect(d.trace.timeUs[byTime.after_entry]).toBe(d.trace.timeUs[1000]);
  });
});
