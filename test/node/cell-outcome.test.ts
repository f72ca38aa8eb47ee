/**
 * The result cache serves only results whose every field a run reads is there: an entry written
 * before a field was added (by an older memlens of the same version string, or a bug) is
 * recomputed, never taken for a result that lacks what the check decides from.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { npuSnapshotBytes } from '../../scripts/synth/npu.js';
import { cellResult } from '../../src/engine/analyses/run/cell-result.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { type CellOutcome, isCellOutcome } from '../../src/node/cache/cell-outcome.js';
import { ResultCache } from '../../src/node/cache/result-cache.js';

const work = mkdtempSync(join(tmpdir(), 'memlens-cell-outcome-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('cached cell results', () => {
  const result = cellResult(loadSnapshotBytes(npuSnapshotBytes({ traced: false }).bytes));
  const cache = new ResultCache<CellOutcome>('test', isCellOutcome, undefined, work);

  it('a result with the devices that have history is served', () => {
    cache.put('a'.repeat(64), { result });
    expect(cache.get('a'.repeat(64))).toEqual({ value: { result } });
  });

  it('a result without them (its summary counts workspace markers as history) is not', () => {
    const { history: _, ...stale } = result;
    cache.put('b'.repeat(64), { result: stale as typeof result });
    expect(cache.get('b'.repeat(64))).toEqual({ doubt: 'not the shape of a result' });
  });
});
