import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { BlockState } from '../../../../src/engine/model/segments.js';
import type { DeviceModel, Snapshot } from '../../../../src/engine/model/snapshot.js';
import { Action } from '../../../../src/engine/model/trace-columns.js';
import {
  GroupStacks,
  GroupTotals,
  poolEnvelopes,
  poolHitAt,
  poolTimelineLod,
} from '../../../../src/engine/views/pools/pool-envelopes.js';
import { segmentPieces } from '../../../../src/engine/views/pools/segment-timeline.js';

/**
 * The pools timeline (memory_viz's Allocated Memory incl. Private Pools): after every entry the
 * (pool, stream) envelopes must add up to the model's reserved bytes and the allocations inside
 * them to the live allocations' bytes; each drawn column stacks to the reserved curve.
 */
const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

function liveBytes(d: DeviceModel, k: number): number {
  let n = 0;
  for (const id of d.live.aliveAfter(k)) n += d.allocations.size[id]!;
  return n;
}

function check(s: Snapshot): void {
  for (const d of s.devices) {
    const p = segmentPieces(s, d);
    const env = poolEnvelopes(s, d, p);
    const n = d.trace.length;
    const reservedAt = (k: number) => (k < 0 ? d.totals.start.reserved : d.totals.reserved[k]!);
    const sum = (a: Float64Array) => a.reduce((x, y) => x + y, 0);
    const totals = new GroupTotals(d, p, env, -1);
    // Live allocation bytes at a stride of entries (the live index is the independent figure).
    const stride = Math.max(1, Math.floor(n / 200));
    for (let k = -1; k < n; k++) {
      totals.advanceTo(k);
      if (sum(totals.reserved) !== reservedAt(k))
        expect([k, sum(totals.reserved)]).toEqual([k, reservedAt(k)]);
      if (k % stride === 0) expect(sum(totals.active)).toBe(liveBytes(d, k) - outsideBytes(d, env, k));
    }
    // Starting anywhere gives what stepping there gave.
    const mid = Math.floor(n / 2);
    const fresh = new GroupTotals(d, p, env, mid);
    const stepped = new GroupTotals(d, p, env, -1);
    stepped.advanceTo(mid);
    expect([...fresh.reserved, ...fresh.active]).toEqual([...stepped.reserved, ...stepped.active]);
    const lod = poolTimelineLod(d, p, env, { axis: 'entry', x0: 0, x1: n, columns: 300, rows: 100 });
    const top = new Float64Array(lod.columns);
    for (let r = 0; r < lod.runs; r++)
      for (let c = lod.runX0[r]!; c < lod.runX1[r]!; c++) top[c] = Math.max(top[c]!, lod.runY1[r]!);
    const groups = env.groups.length;
    for (let c = 0; c < lod.columns; c++) {
      const k = lod.sample[c]!;
      expect(top[c]).toBe(reservedAt(k));
      // Each envelope ends where its group's reserved bytes, stacked on those below, reach.
      const at = new GroupTotals(d, p, env, k);
      let below = 0;
      for (let g = 0; g < groups; g++) {
        below += at.reserved[g]!;
        expect(lod.envelopeTop[g * lod.columns + c]).toBe(below);
      }
      if (reservedAt(k) > 0) expect(poolHitAt(d, p, env, k, reservedAt(k) - 1)).not.toBeNull();
      expect(poolHitAt(d, p, env, k, reservedAt(k))).toBeNull();
    }
    // An allocation's own run is where the exact picker finds it, and it is live then, in its group.
    let checked = 0;
    for (let r = 0; r < lod.runs && checked < 200; r++) {
      const id = lod.runAlloc[r]!;
      if (id < 0) continue;
      const k = lod.sample[lod.runX0[r]!]!;
      const hit = poolHitAt(d, p, env, k, (lod.runY0[r]! + lod.runY1[r]!) / 2);
      expect(hit).toEqual({ group: env.allocGroup[id], alloc: id });
      expect(d.live.aliveAfter(k)).toContain(id);
      checked++;
    }
  }
}

/** Bytes of live allocations in no reserved piece (an inconsistent file): in no envelope. */
function outsideBytes(d: DeviceModel, env: ReturnType<typeof poolEnvelopes>, k: number): number {
  let n = 0;
  for (const id of d.live.aliveAfter(k)) if (env.allocGroup[id]! < 0) n += d.allocations.size[id]!;
  return n;
}

describe('pool envelopes hold the reserved bytes after every entry', () => {
  for (const f of corpus)
    it(f, () => check(loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, f))))));
  for (const [name, opts] of [
    ['two streams and a private pool', { events: 12_000, seed: 42, streams: 2, privatePool: true }],
    ['expandable segments (map/unmap)', { events: 12_000, seed: 41, expandableSegments: true, streams: 1 }],
    ['a ring buffer that dropped its beginning', { events: 12_000, seed: 43, ringBufferOverflow: true }],
  ] as const)
    it(`generated: ${name}`, () => check(loadSnapshotBytes(generateSnapshotBytes(opts).bytes)));
});

describe('the planted private pool has its own envelope', () => {
  const s = loadSnapshotBytes(
    generateSnapshotBytes({ events: 12_000, seed: 42, streams: 2, privatePool: true }).bytes,
  );
  const d = s.devices[0]!;
  const p = segmentPieces(s, d);
  const env = poolEnvelopes(s, d, p);
  // What the generator planted: its private pool's segments are never released, so they are in the
  // dump with segment_pool_id (0, 1); each was reserved by the last segment_alloc of its range.
  const planted = d.segmentIds.map((id) => s.tables.segments[id]!).filter((g) => g.poolId[1] === 1);
  const t = d.trace;
  const reservedAt = planted.map((g) => {
    let at = -1;
    for (let i = 0; i < t.length; i++)
      if (t.action[i] === Action.segment_alloc && t.addr[i] === g.address && t.size[i] === g.totalSize)
        at = i;
    return at;
  });

  it('one group is the private pool, on the stream the graph was captured on', () => {
    expect(planted.length).toBeGreaterThan(0);
    const streams = [...new Set(planted.map((g) => g.stream))];
    expect(env.groups.filter((g) => g.pool[1] === 1)).toEqual(
      streams.map((stream) => ({ pool: [0, 1], stream })),
    );
    // Two streams besides the default: the default pool has an envelope per stream it used.
    expect(env.groups.filter((g) => g.pool[1] === 0).length).toBeGreaterThan(1);
  });

  it("its envelope holds exactly the planted pool's bytes after every entry", () => {
    const group = env.groups.findIndex((g) => g.pool[1] === 1);
    const totals = new GroupTotals(d, p, env, -1);
    for (let k = -1; k < t.length; k++) {
      totals.advanceTo(k);
      const want = planted.reduce((n, g, i) => n + (reservedAt[i]! <= k ? g.totalSize : 0), 0);
      if (totals.reserved[group] !== want) expect([k, totals.reserved[group]]).toEqual([k, want]);
      expect(totals.active[group]).toBeLessThanOrEqual(totals.reserved[group]!);
    }
    // At the dump, its allocations are the planted pool's live blocks.
    const { blocks } = s.tables;
    let live = 0;
    for (const g of planted)
      for (let b = g.firstBlock; b < g.firstBlock + g.blockCount; b++)
        if (blocks.state[b] === BlockState.allocated || blocks.state[b] === BlockState.pendingFree)
          live += blocks.requestedSize[b]!;
    expect(totals.active[group]).toBe(live);
    // And each allocation stacked in its envelope lies in one of the planted pool's segments.
    const stacks = new GroupStacks(env, d.allocations.count);
    new GroupTotals(d, p, env, t.length - 1, stacks);
    const inside: number[] = [];
    for (let id = stacks.of(group).head; id !== -1; id = stacks.of(group).next[id]!) inside.push(id);
    expect(inside.length).toBeGreaterThan(0);
    for (const id of inside) {
      const a = d.allocations.addr[id]!;
      expect(planted.some((g) => g.address <= a && a < g.address + g.totalSize)).toBe(true);
    }
  });
});
