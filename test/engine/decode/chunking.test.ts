import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/engine/analyses/summary/summary.js';
import { loadSnapshot, loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { rng } from '../../helpers/fuzz.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const EXAMPLE = join(import.meta.dirname, '..', '..', '..', 'examples', 'example_snapshot.pickle');
const FILES = [
  EXAMPLE,
  join(CORPUS, 'MAGMA27_assignment2__memory_snapshot.pickle'),
  join(CORPUS, 'Yiyi_LLM-inference__1.3b_snapshot__a21816f.pickle'),
].filter(existsSync);

async function* pieces(bytes: Uint8Array, sizeOf: () => number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; ) {
    const n = Math.max(1, sizeOf());
    yield bytes.slice(at, at + n);
    at += n;
  }
}

/** The decoder must give the same snapshot whatever the chunk boundaries cut through. */
describe('streaming: chunk boundaries do not change the result', () => {
  for (const file of FILES) {
    const bytes = new Uint8Array(readFileSync(file));
    const whole = summarize(loadSnapshotBytes(bytes));
    for (const [label, sizeOf] of [
      ['13-byte chunks', () => 13],
      [
        'random 1..5000-byte chunks',
        (
          (r) => () =>
            1 + Math.floor(r() * 5000)
        )(rng(7)),
      ],
      ['65537-byte chunks', () => 65537],
    ] as const) {
      it(`${file.split('/').pop()} in ${label}`, async () => {
        const streamed = summarize(await loadSnapshot(pieces(bytes, sizeOf)));
        expect(streamed).toEqual(whole);
      });
    }
  }
});
