import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { orderSegments, poolStateAfter } from '../../../../src/engine/views/pools/pool-state.js';

/**
 * The pool state names each segment's private pool (CUDA graph capture: `segment_pool_id` other
 * than (0, 0)) and lists segments by address or by largest free gap, on a generated snapshot
 * with a planted private pool.
 */
describe('pool state: private pools and segment order', () => {
  const s = loadSnapshotBytes(generateSnapshotBytes({ events: 6000, seed: 7, privatePool: true }).bytes);
  const d = s.devices[0]!;
  const n = d.trace.length;

  it("marks exactly the dump's private-pool segments at dump time, with their pool id", () => {
    const pooled = s.tables.segments.filter((g) => g.poolId[0] !== 0 || g.poolId[1] !== 0);
    expect(pooled.length).toBeGreaterThan(0);
    const pool = poolStateAfter(s, d, n - 1);
    const marked = pool.segments.filter((g) => g.private_pool !== null);
    expect(marked.map((g) => g.address).sort()).toEqual(pooled.map((g) => g.address).sort());
    for (const g of marked) {
      const dump = pooled.find((x) => x.address === g.address)!;
      expect(g.private_pool).toEqual([...dump.poolId]);
    }
  });

  it('orders by largest free gap, keeping every segment', () => {
    const pool = poolStateAfter(s, d, Math.floor(n / 2));
    const byGap = orderSegments(pool.segments, 'gap');
    expect(byGap.map((g) => g.address).sort()).toEqual(pool.segments.map((g) => g.address).sort());
    for (let i = 1; i < byGap.length; i++)
      expect(byGap[i - 1]!.max_gap).toBeGreaterThanOrEqual(byGap[i]!.max_gap);
    expect(byGap[0]!.max_gap).toBe(Math.max(...pool.segments.map((g) => g.max_gap)));
    expect(orderSegments(pool.segments, 'address')).toEqual(pool.segments);
  });
});
