import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { fragmentationOf } from '../../../../src/engine/analyses/fragmentation/fragmentation.js';
import {
  dumpFreeState,
  estimatedFreeState,
  freeStateAfter,
} from '../../../../src/engine/derived/state/free-blocks.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');

interface Expected {
  device: number;
  reserved_bytes: number;
  active_bytes: number;
  inactive_split_bytes: number;
  largest_inactive_block: number;
}

describe.skipIf(files.length === 0)('frag at dump time matches the corpus figures', () => {
  for (const file of files) {
    it(file, () => {
      const expected = JSON.parse(readFileSync(join(CORPUS, 'expected', `${file}.json`), 'utf8')) as {
        devices: Expected[];
      };
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const exp of expected.devices) {
        const d = s.devices.find((x) => x.device === exp.device)!;
        const f = fragmentationOf(s, d).dump;
        expect(f.exact).toBe(true);
        expect(f.reserved_bytes).toBe(exp.reserved_bytes);
        expect(f.used_bytes).toBe(exp.active_bytes);
        expect(f.free_bytes).toBe(exp.reserved_bytes - exp.active_bytes);
        expect(f.inactive_split_bytes).toBe(exp.inactive_split_bytes);
        expect(f.largest_free_block).toBe(exp.largest_inactive_block);
        // Every free byte is in exactly one free list.
        expect(f.free_lists.reduce((n, g) => n + g.free_bytes, 0)).toBe(f.free_bytes);
      }
    });
  }
});

/**
 * After the last entry every live allocation is still alive at dump, so the estimate from the
 * trace (reserved ranges minus live allocations) must rebuild the dump's free blocks exactly: two
 * derivations of the same state, one from the trace and one from the blocks.
 */
describe.skipIf(files.length === 0)('the estimate after the last entry rebuilds the dump (corpus)', () => {
  for (const file of files) {
    it(file, () => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        const facts = d.allocations.facts;
        if (d.trace.length === 0 || facts.unmatchedAllocs > 0 || facts.doubleAllocs > 0) continue;
        const exact = dumpFreeState(s, d);
        const est = estimatedFreeState(s, d, d.trace.length - 1);
        expect(est.reserved_bytes).toBe(exact.reserved_bytes);
        expect(est.free_bytes).toBe(exact.free_bytes);
        expect(est.free_blocks).toBe(exact.free_blocks);
        expect(est.inactive_split_bytes).toBe(exact.inactive_split_bytes);
        expect(est.groups).toEqual(exact.groups);
      }
    });
  }
});

describe('frag on generated snapshots (expandable segments, several streams, pending frees)', () => {
  const cases = [
    { name: 'classic, 3 extra streams', options: { events: 5000, seed: 41, streams: 3, pendingFrees: true } },
    {
      name: 'expandable segments, 2 streams',
      options: { events: 5000, seed: 42, streams: 2, expandableSegments: true },
    },
    { name: 'private pool', options: { events: 5000, seed: 43, privatePool: true } },
  ];
  for (const { name, options } of cases) {
    it(name, () => {
      const { bytes, expected } = generateSnapshotBytes(options);
      const s = loadSnapshotBytes(bytes);
      const d = s.devices[0]!;
      const exp = expected.devices[0]!;
      const f = fragmentationOf(s, d, { at: 1000 });
      expect(f.dump.reserved_bytes).toBe(exp.reserved_bytes);
      expect(f.dump.free_bytes).toBe(exp.reserved_bytes - exp.active_bytes);
      expect(f.dump.inactive_split_bytes).toBe(exp.inactive_split_bytes);
      expect(f.dump.largest_free_block).toBe(exp.largest_inactive_block);
      expect(f.at!.exact).toBe(false);
      expect(f.at!.reserved_bytes).toBe(d.totals.reserved[1000]);
      // Estimated state: free bytes never below what the totals say (requested bytes ≤ block bytes).
      expect(f.at!.free_bytes).toBeLessThanOrEqual(d.totals.reserved[1000]! - d.totals.active[1000]!);
      const last = freeStateAfter(s, d, d.trace.length - 1);
      expect(last.exact).toBe(true);
      expect(estimatedFreeState(s, d, d.trace.length - 1).groups).toEqual(dumpFreeState(s, d).groups);
    });
  }

  it('a segment_alloc is made only when no free block of its list was large enough', () => {
    const { bytes } = generateSnapshotBytes({ events: 8000, seed: 44, streams: 2 });
    const s = loadSnapshotBytes(bytes);
    const f = fragmentationOf(s, s.devices[0]!, { detailed: 1000 });
    expect(f.segment_allocs.length).toBeGreaterThan(0);
    for (const m of f.segment_allocs) {
      if (m.request_bytes === null) continue;
      // The estimate counts unsplit tails as free, so it can only overstate the largest block by < 1 MiB.
      expect(m.detail!.same_list_largest_free_block).toBeLessThan(m.request_bytes + 1024 * 1024);
    }
  });
});

describe('memlens frag (built CLI)', () => {
  it('prints the explanation and the tables, and the same figures as JSON', () => {
    const file = join(
      CORPUS,
      'Wedsonlin_assignment2__results_medium_512_training_memory_snapshot__87b0864.pickle',
    );
    if (!existsSync(file)) return;
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'frag', ...args, file], {
        encoding: 'utf8',
        timeout: 60_000,
      });
    const text = run('--at', '2000');
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/reserved but free\s+in \d+ blocks/);
    expect(text.stdout).toMatch(/after trace entry 2,000 \(estimated from the trace\)/);
    expect(text.stdout).toMatch(/non-releasable/);
    const json = run('--json');
    expect(json.status).toBe(0);
    const dev = JSON.parse(json.stdout).files[0].devices[0];
    expect(dev.dump.inactive_split_bytes).toBe(
      dev.dump.free_lists.length > 0 ? dev.dump.inactive_split_bytes : 0,
    );
    expect(dev.dump.exact).toBe(true);
    expect(dev.segment_allocs[0].request_bytes).toBeGreaterThan(0);
    // Over time: after the last entry the curve's estimate is the dump's exact figure.
    const last = dev.curve.at(-1);
    expect([last.inactive_split_bytes, last.releasable_bytes]).toEqual([
      dev.dump.inactive_split_bytes,
      dev.dump.releasable_bytes,
    ]);
    for (const m of dev.segment_allocs) expect(m.inactive_split_before_bytes).toBeGreaterThanOrEqual(0);
    expect(dev.non_releasable_peak.inactive_split_bytes).toBeGreaterThanOrEqual(last.inactive_split_bytes);
    expect(text.stdout).toMatch(/non-releasable \(inactive split\) memory peaked at .* after entry/);
  });
});
