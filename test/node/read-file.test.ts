import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/generate.js';
import { summarize } from '../../src/engine/analyses/summary/summary.js';
import { loadSnapshot, loadSnapshotBytes } from '../../src/engine/load/load.js';
import { readChunks } from '../../src/node/files/read-file.js';

/**
 * readChunks refills three buffers in turn. Small chunks make a file pass through each buffer
 * many times, so any sink that kept a chunk past its turn (the pickle VM across a seam, the
 * JSON sink, the inflater) would read bytes of a later chunk and decode something else.
 */
describe('readChunks: reused buffers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-read-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const pickle = generateSnapshotBytes({ events: 3000, seed: 5 }).bytes;
  const json = generateSnapshotBytes({ events: 3000, seed: 5, format: 'json' }).bytes;
  const expected = summarize(loadSnapshotBytes(pickle));

  for (const [name, bytes] of [
    ['pickle', pickle],
    ['gzipped pickle', gzipSync(pickle)],
    ['JSON', json],
    ['gzipped JSON', gzipSync(json)],
  ] as const) {
    it(`${name} in 1000-byte chunks decodes as the whole file does`, async () => {
      const path = join(dir, name.replace(' ', '-'));
      writeFileSync(path, bytes);
      expect(bytes.length).toBeGreaterThan(3 * 1000 * 10);
      const streamed = await loadSnapshot(readChunks(path, 1000), { sizeHint: bytes.length });
      const s = summarize(streamed);
      expect({ ...s, layout: undefined, pickle_protocol: undefined }).toEqual({
        ...expected,
        layout: undefined,
        pickle_protocol: undefined,
      });
      expect(s.devices[0]!.trace_entries).toBeGreaterThan(1000);
    });
  }
});
