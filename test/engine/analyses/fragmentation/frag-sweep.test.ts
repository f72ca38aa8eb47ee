import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import type { SynthOptions } from '../../../../scripts/synth/options.js';
import { fragSweep } from '../../../../src/engine/analyses/fragmentation/frag-sweep.js';
import { fragmentationOf } from '../../../../src/engine/analyses/fragmentation/fragmentation.js';
import { dumpFreeState } from '../../../../src/engine/derived/state/free-blocks.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { DeviceModel, Snapshot } from '../../../../src/engine/model/snapshot.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const MiB = 1024 * 1024;

/** The sweep's figures after the last entry (before the first when the trace is empty). */
function atEnd(s: Snapshot, d: DeviceModel) {
  const sw = fragSweep(s, d, [d.trace.length - 1]);
  return { inactive: sw.inactive_split_bytes[0], releasable: sw.releasable_bytes[0] };
}

/** The dump's exact blocks against the sweep, and the detailed estimate at every segment_alloc. */
function checkDevice(s: Snapshot, d: DeviceModel): void {
  const exact = dumpFreeState(s, d);
  expect(atEnd(s, d)).toEqual({ inactive: exact.inactive_split_bytes, releasable: exact.releasable_bytes });
  const f = fragmentationOf(s, d, { detailed: Number.POSITIVE_INFINITY });
  if (d.trace.length > 0) {
    const last = f.curve.at(-1)!;
    expect([last.after_entry, last.inactive_split_bytes, last.releasable_bytes]).toEqual([
      d.trace.length - 1,
      exact.inactive_split_bytes,
      exact.releasable_bytes,
    ]);
  }
  for (const m of f.segment_allocs) {
    expect(m.inactive_split_before_bytes, `before entry ${m.entry}`).toBe(m.detail!.inactive_split_bytes);
  }
}

/**
 * Two derivations of the same figures: the sweep replays the trace forwards, the dump lists the
 * blocks, and the detailed estimate replays segment events backwards from the dump.
 */
describe.skipIf(files.length === 0)('the sweep against the dump and the detailed estimate (corpus)', () => {
  for (const file of files) {
    it(file, () => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        const facts = d.allocations.facts;
        // A trace that contradicts its dump has no single answer to agree on.
        if (facts.unmatchedAllocs > 0 || facts.doubleAllocs > 0) continue;
        checkDevice(s, d);
      }
    });
  }
});

describe('the sweep on generated scenarios, against what the generator planted', () => {
  const cases: [string, SynthOptions][] = [
    ['fragmentation OOM', { events: 6000, seed: 5, oomCause: 'fragmentation' }],
    ['expandable segments, 2 streams', { events: 5000, seed: 42, streams: 2, expandableSegments: true }],
    ['3 extra streams, pending frees', { events: 5000, seed: 41, streams: 3, pendingFrees: true }],
    ['ring buffer overflow', { events: 5000, seed: 7, ringBufferOverflow: true }],
  ];
  for (const [name, options] of cases) {
    it(name, () => {
      const { bytes, expected } = generateSnapshotBytes(options);
      const s = loadSnapshotBytes(bytes);
      const d = s.devices[0]!;
      expect(atEnd(s, d).inactive).toBe(expected.devices[0]!.inactive_split_bytes);
      checkDevice(s, d);
    });
  }
});

/**
 * Segment A (20 MiB) holds a 4 MiB tensor from before recording; segment C (2 MiB) is empty.
 * The trace reserves B (20 MiB), fills it with x (8 MiB) and y (6 MiB), frees both, releases B,
 * then puts z (2 MiB) in A. Worked out by hand, in MiB:
 *   after entry       -1  0  1  2  3  4  5  6  7  8
 *   inactive split    16 16 28 22 22 30 30 16 16 14
 *   releasable         2 22  2  2  2  2  2 22  2  2
 */
describe('a hand-made trace', () => {
  const A = 0x10000000;
  const B = 0x20000000;
  const C = 0x30000000;
  const block = (address: number, size: number, state: string) => ({
    address,
    size,
    requested_size: state === 'inactive' ? 0 : size,
    state,
    frames: [],
  });
  const entry = (action: string, addr: number, size: number, time: number) => ({
    action,
    addr,
    size,
    stream: 0,
    time_us: time,
    frames: [],
  });
  const json = {
    segments: [
      {
        device: 0,
        address: A,
        total_size: 20 * MiB,
        stream: 0,
        segment_type: 'large',
        blocks: [
          block(A, 4 * MiB, 'active_allocated'),
          block(A + 4 * MiB, 2 * MiB, 'active_allocated'),
          block(A + 6 * MiB, 14 * MiB, 'inactive'),
        ],
      },
      {
        device: 0,
        address: C,
        total_size: 2 * MiB,
        stream: 0,
        segment_type: 'small',
        blocks: [block(C, 2 * MiB, 'inactive')],
      },
    ],
    device_traces: [
      [
        entry('segment_alloc', B, 20 * MiB, 10),
        entry('alloc', B, 8 * MiB, 11),
        entry('alloc', B + 8 * MiB, 6 * MiB, 12),
        entry('free_requested', B, 8 * MiB, 13),
        entry('free_completed', B, 8 * MiB, 14),
        entry('free_requested', B + 8 * MiB, 6 * MiB, 15),
        entry('free_completed', B + 8 * MiB, 6 * MiB, 16),
        entry('segment_free', B, 20 * MiB, 17),
        entry('alloc', A + 4 * MiB, 2 * MiB, 18),
      ],
    ],
  };
  const s = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(json)));
  const d = s.devices[0]!;
  const after = [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8];

  it('gives the figures worked out on paper after every entry', () => {
    const sw = fragSweep(s, d, after);
    expect(Array.from(sw.inactive_split_bytes, (b) => b / MiB)).toEqual([
      16, 16, 28, 22, 22, 30, 30, 16, 16, 14,
    ]);
    expect(Array.from(sw.releasable_bytes, (b) => b / MiB)).toEqual([2, 22, 2, 2, 2, 2, 2, 22, 2, 2]);
    expect([sw.peak_after, sw.peak_inactive_split_bytes / MiB]).toEqual([4, 30]);
  });

  it('reports the peak and the figures before the segment_alloc', () => {
    const f = fragmentationOf(s, d);
    expect(f.non_releasable_peak).toMatchObject({
      after_entry: 4,
      inactive_split_bytes: 30 * MiB,
      time_us: 14,
    });
    expect(f.segment_allocs).toMatchObject([
      { entry: 0, inactive_split_before_bytes: 16 * MiB, releasable_before_bytes: 2 * MiB },
    ]);
    const last = f.curve.at(-1)!;
    expect([last.after_entry, last.inactive_split_bytes, last.releasable_bytes]).toEqual([
      8,
      14 * MiB,
      2 * MiB,
    ]);
  });
});
