import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { allocationDetails } from '../../../src/engine/derived/allocation/allocation-details.js';
import { allocationAt, offsetOf } from '../../../src/engine/derived/state/live-order.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import type { DeviceModel } from '../../../src/engine/model/snapshot.js';
import { poolStateAfter } from '../../../src/engine/views/pools/pool-state.js';
import { axisExtent, stepMarkers } from '../../../src/engine/views/timeline/timeline-axis.js';
import {
  type TimelineLod,
  timelineLod,
  timelineOutline,
} from '../../../src/engine/views/timeline/timeline-lod.js';

/** The queries the web app's worker answers: timeline level of detail, picking, pool state. */
const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

/** Each column's runs must tile [0, active) exactly, and name allocations live at the column's sample. */
function checkColumns(d: DeviceModel, lod: TimelineLod): void {
  const live = new Map<number, Set<number>>();
  const byColumn: [number, number, number][][] = Array.from({ length: lod.columns }, () => []);
  for (let r = 0; r < lod.runs; r++)
    for (let c = lod.runX0[r]!; c < lod.runX1[r]!; c++)
      byColumn[c]!.push([lod.runY0[r]!, lod.runY1[r]!, lod.runAlloc[r]!]);
  let picks = 0;
  for (let c = 0; c < lod.columns; c++) {
    const runs = byColumn[c]!;
    runs.sort((x, y) => x[0] - y[0]);
    let y = 0;
    for (const [y0, y1] of runs) {
      expect(y0).toBe(y);
      y = y1;
    }
    const k = lod.sample[c]!;
    expect(y).toBeCloseTo(k < 0 ? d.totals.start.active : d.totals.active[k]!, 0);
    let set = live.get(k);
    if (set === undefined) live.set(k, (set = new Set(d.live.aliveAfter(k))));
    for (const [y0, y1, id] of runs) {
      if (id < 0) continue;
      expect(set.has(id)).toBe(true);
      // Picking replays the live set: check a sample of runs, not all of them.
      if (picks++ % 17 !== 0) continue;
      expect(allocationAt(d, k, (y0 + y1) / 2)).toBe(id);
      expect(offsetOf(d, k, id)).toBe(y0);
    }
  }
}

describe.skipIf(files.length === 0)('timeline level of detail on the corpus', () => {
  for (const file of files.slice(0, 8)) {
    it(file, () => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        const [x0, x1] = axisExtent(d, 'entry');
        const lod = timelineLod(d, { axis: 'entry', x0, x1, columns: 120, rows: 200 });
        checkColumns(d, lod);
        // The envelope is exact: the tallest column is the active peak of the window.
        const peak = Math.max(d.totals.start.active, ...d.totals.active);
        expect(Math.max(...lod.active)).toBe(peak);
        // Zoomed in past one entry per column, each column carries the state of the entry it shows.
        const zoom = timelineLod(d, { axis: 'entry', x0: 0, x1: Math.min(40, x1), columns: 80, rows: 200 });
        checkColumns(d, zoom);
      }
    });
  }
});

describe('timeline, picking and pool state on a generated training loop', () => {
  const { bytes, expected } = generateSnapshotBytes({ events: 8000, seed: 7 });
  const s = loadSnapshotBytes(bytes);
  const d = s.devices[0]!;
  const exp = expected.devices[0]!;

  it('the reserved line peaks at the planted peak, on both axes', () => {
    for (const axis of ['entry', 'time'] as const) {
      const [x0, x1] = axisExtent(d, axis);
      const lod = timelineLod(d, { axis, x0, x1, columns: 300, rows: 400 });
      expect(Math.max(...lod.reserved)).toBe(exp.trace_peak_reserved_bytes);
      expect(lod.drawnAllocations).toBeGreaterThan(0);
      checkColumns(d, lod);
    }
  });

  it('every allocation is placed: merged runs hold exactly the allocations under a pixel', () => {
    const lod = timelineLod(d, { axis: 'entry', x0: 0, x1: d.trace.length, columns: 50, rows: 10 });
    expect(lod.mergedPlacements).toBeGreaterThan(0);
    checkColumns(d, lod);
  });

  it("the outline drawn first is the stacked answer's shape: the same columns, samples, top and lines, no runs", () => {
    for (const axis of ['entry', 'time'] as const) {
      const [x0, x1] = axisExtent(d, axis);
      for (const req of [
        { axis, x0, x1, columns: 300, rows: 400 },
        { axis, x0: x0 + (x1 - x0) / 3, x1: x0 + (x1 - x0) / 2, columns: 97, rows: 50, yTop: 1e12 },
      ]) {
        const lod = timelineLod(d, req);
        const outline = timelineOutline(d, req);
        expect(outline.runs).toBe(0);
        expect(outline.runX0.length).toBe(0);
        expect([outline.columns, outline.yMax]).toEqual([lod.columns, lod.yMax]);
        expect([...outline.sample]).toEqual([...lod.sample]);
        expect([...outline.active]).toEqual([...lod.active]);
        expect([...outline.reserved]).toEqual([...lod.reserved]);
      }
    }
  });

  it('step markers come from the planted ProfilerStep annotations', () => {
    const markers = stepMarkers(s, d, 'entry');
    expect(markers.length).toBe(s.annotations.length);
    expect(markers.some((m) => m.name.startsWith('ProfilerStep#'))).toBe(true);
    for (let i = 1; i < markers.length; i++) expect(markers[i]!.x).toBeGreaterThanOrEqual(markers[i - 1]!.x);
  });

  it('pool state at the dump matches the planted segments and blocks', () => {
    const pool = poolStateAfter(s, d, d.trace.length - 1);
    expect(pool.segments.length).toBe(exp.segments);
    expect(pool.reserved_bytes).toBe(exp.reserved_bytes);
    const blocks = pool.segments.flatMap((g) => g.blocks);
    expect(pool.outside).toEqual([]);
    expect(blocks.reduce((n, b) => n + b.size, 0)).toBe(exp.requested_bytes);
    const allocated = blocks.filter((b) => b.state === 'allocated');
    expect(allocated.reduce((n, b) => n + (b.block_size ?? 0), 0)).toBe(exp.allocated_bytes);
    for (const g of pool.segments) {
      expect(g.gap_bytes).toBe(g.size - g.allocated_bytes);
      if (g.gap_count > 0) expect(g.max_gap).toBeGreaterThan(0);
    }
  });

  it('pool state anywhere holds exactly the live allocations, inside the reserved ranges', () => {
    for (const k of [-1, 100, 2500, 5000, d.trace.length - 2]) {
      const pool = poolStateAfter(s, d, k);
      const ids = pool.segments.flatMap((g) => g.blocks.map((b) => b.alloc)).sort((x, y) => x - y);
      expect(ids).toEqual([...d.live.aliveAfter(k)]);
      expect(pool.reserved_bytes).toBe(k < 0 ? d.totals.start.reserved : d.totals.reserved[k]);
    }
  });

  it('details of a picked allocation are the planted alloc entry', () => {
    const k = 4000;
    const id = allocationAt(d, k, d.totals.active[k]! - 1);
    expect(id).toBeGreaterThanOrEqual(0);
    const info = allocationDetails(s, d, id);
    expect(info.alloc_entry).toBeLessThanOrEqual(k);
    if (info.alloc_entry >= 0) {
      expect(d.trace.addr[info.alloc_entry]).toBe(info.address);
      expect(d.trace.size[info.alloc_entry]).toBe(info.size);
    }
    expect(info.free_completed_entry === null || info.free_completed_entry > k).toBe(true);
    expect(allocationAt(d, k, d.totals.active[k]!)).toBe(-1);
  });
});

/** The pinned allocation's pool: its dump segment's (a planted private pool), else the allocator's size rule. */
describe('allocation details: pool, private pool', () => {
  const s = loadSnapshotBytes(generateSnapshotBytes({ events: 6000, seed: 23, privatePool: true }).bytes);
  const d = s.devices[0]!;
  const a = d.allocations;

  it("an allocation alive at dump has its segment's pool and private pool id", () => {
    let privates = 0;
    for (const g of s.tables.segments) {
      for (let b = g.firstBlock; b < g.firstBlock + g.blockCount; b++) {
        const id = a.block.indexOf(b);
        if (id < 0) continue;
        const info = allocationDetails(s, d, id);
        expect([info.pool, info.pool_exact]).toEqual([g.pool, true]);
        const planted = g.poolId[0] !== 0 || g.poolId[1] !== 0;
        expect(info.private_pool).toEqual(planted ? [...g.poolId] : null);
        if (planted) privates++;
      }
    }
    // The generator's private pool is segment_pool_id (0, 1) (synth/options.ts).
    expect(privates).toBeGreaterThan(0);
  });

  it('an allocation freed before the dump gets its pool by size: at most 1 MiB is the small pool', () => {
    let freed = 0;
    for (let id = 0; id < a.count && freed < 200; id++) {
      if (a.block[id]! >= 0) continue;
      const info = allocationDetails(s, d, id);
      expect([info.pool, info.pool_exact]).toEqual([a.size[id]! <= 1024 * 1024 ? 'small' : 'large', false]);
      freed++;
    }
    expect(freed).toBe(200);
  });
});
