import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EDGE_DIR } from '../../helpers/edge-fixtures.js';
import { fuzz } from '../../helpers/fuzz.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');

/** Small inputs keep thousands of cases inside the CI budget; `npm run fuzz` runs longer. */
function inputs(): Uint8Array[] {
  const dirs = [CORPUS, EDGE_DIR].filter(existsSync);
  const files = dirs.flatMap((d) => readdirSync(d).map((f) => join(d, f)));
  return files
    .filter((f) => f.endsWith('.pickle') && statSync(f).size < 300_000)
    .map((f) => new Uint8Array(readFileSync(f)));
}

describe('fuzz: mutated snapshots load or fail with one clean SnapshotError', () => {
  it('3000 mutations', () => {
    const result = fuzz(inputs(), 3000, 1);
    expect(result.failures.slice(0, 5)).toEqual([]);
    expect(result.rejected).toBeGreaterThan(1000);
    expect(result.slowestMs).toBeLessThan(5000);
  }, 120_000);
});
