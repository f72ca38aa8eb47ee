import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { Snapshot } from '../../../../src/engine/model/snapshot.js';
import {
  pieceAt,
  segmentPieces,
  segmentTimelineLod,
} from '../../../../src/engine/views/pools/segment-timeline.js';

/**
 * The segment timeline (memory_viz's Active Cached Segment Timeline): after every entry its live
 * pieces must hold exactly the reserved bytes the model's running totals give, and each drawn
 * column must stack them to that height.
 */
const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

function check(s: Snapshot): void {
  for (const d of s.devices) {
    const p = segmentPieces(s, d);
    const n = d.trace.length;
    const reservedAt = (k: number) => (k < 0 ? d.totals.start.reserved : d.totals.reserved[k]!);
    // A running sum over the pieces' starts and ends: the live bytes after each entry.
    const delta = new Float64Array(n + 1);
    let live = 0;
    for (let id = 0; id < p.count; id++) {
      expect(p.end[id]).toBeGreaterThan(p.start[id]!);
      if (p.start[id] === -1) live += p.size[id]!;
      else delta[p.start[id]!]! += p.size[id]!;
      if (p.end[id]! <= n - 1) delta[p.end[id]!]! -= p.size[id]!;
    }
    expect(live).toBe(reservedAt(-1));
    for (let k = 0; k < n; k++) {
      live += delta[k]!;
      if (live !== reservedAt(k)) expect([k, live]).toEqual([k, reservedAt(k)]);
    }
    const lod = segmentTimelineLod(d, p, { axis: 'entry', x0: 0, x1: n, columns: 300, rows: 100 });
    const top = new Float64Array(lod.columns);
    for (let r = 0; r < lod.runs; r++)
      for (let c = lod.runX0[r]!; c < lod.runX1[r]!; c++) top[c] = Math.max(top[c]!, lod.runY1[r]!);
    for (let c = 0; c < lod.columns; c++) {
      expect(top[c]).toBe(reservedAt(lod.sample[c]!));
      const k = lod.sample[c]!;
      if (reservedAt(k) > 0) expect(pieceAt(p, k, reservedAt(k) - 1)).toBeGreaterThanOrEqual(0);
      expect(pieceAt(p, k, reservedAt(k))).toBe(-1);
    }
  }
}

describe('segment timeline pieces hold the reserved bytes after every entry', () => {
  for (const f of corpus)
    it(f, () => check(loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, f))))));
  for (const [name, opts] of [
    ['expandable segments (map/unmap)', { events: 20_000, seed: 41, expandableSegments: true }],
    ['streams and a private pool', { events: 12_000, seed: 42, streams: 2, privatePool: true }],
    ['a ring buffer that dropped its beginning', { events: 12_000, seed: 43, ringBufferOverflow: true }],
  ] as const)
    it(`generated: ${name}`, () => check(loadSnapshotBytes(generateSnapshotBytes(opts).bytes)));
});
