import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/generate.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { allocationFacts } from '../../../src/engine/model/allocations.js';
import type { Snapshot } from '../../../src/engine/model/snapshot.js';
import { CORPUS, corpusPickles, PAIRING_CASES } from '../../helpers/pairing-cases.js';

/** The summary's facts come from a pairing pass that writes no table: it must agree with the table's. */
function expectSameFacts(s: Snapshot): void {
  for (const d of s.devices) {
    const alone = allocationFacts(d.trace, s.tables, d.device);
    expect(d.allocationFacts).toEqual(alone);
    expect(alone).toEqual(d.allocations.facts);
    // Built now, the table's facts are the device's.
    expect(d.allocationFacts).toBe(d.allocations.facts);
  }
}

describe('allocation facts without the allocation table', () => {
  for (const [name, options] of PAIRING_CASES) {
    it(name, () => {
      const s = loadSnapshotBytes(generateSnapshotBytes(options).bytes);
      expectSameFacts(s);
    });
  }
  it.skipIf(corpusPickles.length === 0)('every corpus file', () => {
    let orphans = 0;
    for (const f of corpusPickles) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, f))));
      expectSameFacts(s);
      for (const d of s.devices)
        orphans += d.allocationFacts.orphanFrees + d.allocationFacts.blocksBeforeRecording;
    }
    // The corpus has ring-buffer traces: the comparison covered facts that are not all zero.
    expect(orphans).toBeGreaterThan(0);
  });
});
