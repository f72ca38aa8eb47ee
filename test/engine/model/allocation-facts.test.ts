import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../scripts/synth/generate.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { allocationFacts } from '../../../src/engine/model/allocations.js';
import type { Snapshot } from '../../../src/engine/model/snapshot.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

/** Ring-buffer overflow gives orphan frees and blocks from before recording; OOM and pending frees the rest. */
const GENERATED: [string, WriteOptions][] = [
  ['steady loop', { events: 3000, seed: 31 }],
  ['ring buffer overflowed', { events: 3000, seed: 32, ringBufferOverflow: true }],
  ['pending frees, private pool', { events: 3000, seed: 33, pendingFrees: true, privatePool: true }],
  ['two devices, streams', { events: 3000, seed: 34, devices: 2, streams: 3 }],
  ['PyTorch 2.0 layout', { events: 2000, seed: 35, legacy: 'v2.0' }],
];

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
  for (const [name, options] of GENERATED) {
    it(name, () => {
      const s = loadSnapshotBytes(generateSnapshotBytes(options).bytes);
      expectSameFacts(s);
    });
  }
  it.skipIf(corpus.length === 0)('every corpus file', () => {
    let orphans = 0;
    for (const f of corpus) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, f))));
      expectSameFacts(s);
      for (const d of s.devices)
        orphans += d.allocationFacts.orphanFrees + d.allocationFacts.blocksBeforeRecording;
    }
    // The corpus has ring-buffer traces: the comparison covered facts that are not all zero.
    expect(orphans).toBeGreaterThan(0);
  });
});
