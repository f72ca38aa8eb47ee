import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import type { Snapshot } from '../../../src/engine/model/snapshot.js';
import { deviceCapacity } from '../../../src/engine/simulate/capacity.js';
import { type Fidelity, fidelityOf } from '../../../src/engine/simulate/fidelity.js';
import { replayDevice } from '../../../src/engine/simulate/replay.js';
import { recordedSettings } from '../../../src/engine/simulate/settings.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

/**
 * Blocks allocated before the window and freed inside it have no size in the file; the start
 * state infers them, and here one inference sends later equal-size allocations to other
 * (equivalent) 20 MiB segments by best fit's lowest-address tie-break. Segment events and the
 * reserved curve still match exactly; 5 of 400 dump-time segments differ in block layout.
 */
const INFERRED_START_MISSES: Record<string, number> = {
  Wedsonlin_assignment2__results_medium_512_training_memory_snapshot__87b0864_pickle: 5,
};

function fidelity(s: Snapshot): Fidelity[] {
  return s.devices.map((d) =>
    fidelityOf(
      s,
      d,
      replayDevice(s, d, {
        settings: recordedSettings(s.allocatorSettings, '2.6'),
        capacity: deviceCapacity(d, undefined).bytes,
        recorded: true,
        allEvents: false,
      }),
    ),
  );
}

function line(name: string, f: Fidelity): string {
  return `${name}: segment events ${f.matched_segment_events}/${f.recorded_segment_events} (${f.segment_events_matched_percent}%), reserved max deviation ${f.max_reserved_deviation_bytes} B, final segments ${f.matched_final_segments}/${f.recorded_final_segments}`;
}

describe.skipIf(files.length === 0)('simulate fidelity on the real corpus (recorded settings)', () => {
  for (const file of files) {
    it(file, () => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const f of fidelity(s)) {
        console.log(line(file, f));
        expect(f.segment_events_matched_percent).toBe(100);
        expect(f.simulated_segment_events).toBe(f.recorded_segment_events);
        expect(f.max_reserved_deviation_bytes).toBe(0);
        const misses = INFERRED_START_MISSES[file.replace('.', '_')] ?? 0;
        expect(f.simulated_final_segments).toBe(f.recorded_final_segments);
        expect(f.matched_final_segments).toBe(f.recorded_final_segments - misses);
      }
    });
  }
});

/**
 * The generator's allocator model and the simulator both follow the spec, so every segment event
 * of a generated file replays exactly, expandable segments included (§3.1's pass over the free
 * block before the unmapped tail, §5's page mapping and empty_cache unmapping).
 */
const GENERATED: [string, WriteOptions][] = [
  ['training loop', { events: 5000, seed: 1 }],
  ['OOM at the end', { events: 5000, seed: 3, oom: true }],
  ['two extra streams', { events: 5000, seed: 4, streams: 2 }],
  ['pending frees (record_stream)', { events: 5000, seed: 5, pendingFrees: true }],
  ['private pool', { events: 5000, seed: 6, privatePool: true }],
  ['ring buffer overflow (start state rewound)', { events: 5000, seed: 7, ringBufferOverflow: true }],
  ['two devices', { events: 3000, seed: 9, devices: 2 }],
  ['expandable segments', { events: 5000, seed: 2, expandableSegments: true }],
  ['expandable segments, two extra streams', { events: 5000, seed: 8, expandableSegments: true, streams: 2 }],
  [
    'expandable segments, extra stream, pending frees, frequent empty_cache',
    { events: 8000, seed: 11, expandableSegments: true, streams: 1, pendingFrees: true, emptyCacheEvery: 3 },
  ],
  [
    'expandable segments, private pool',
    { events: 5000, seed: 12, expandableSegments: true, privatePool: true },
  ],
  ['expandable segments, OOM at the end', { events: 5000, seed: 3, expandableSegments: true, oom: true }],
];

describe('simulate fidelity on generated snapshots', () => {
  for (const [name, options] of GENERATED) {
    it(name, () => {
      const s = loadSnapshotBytes(generateSnapshotBytes(options).bytes);
      for (const f of fidelity(s)) {
        console.log(line(name, f));
        expect(f.recorded_segment_events).toBeGreaterThan(0);
        expect(f.matched_segment_events).toBe(f.recorded_segment_events);
        expect(f.simulated_segment_events).toBe(f.recorded_segment_events);
        expect(f.max_reserved_deviation_bytes).toBe(0);
        expect(f.matched_final_segments).toBe(f.recorded_final_segments);
      }
    });
  }
});

/**
 * Runs recorded on an H200 under PyTorch 2.11 (fixtures/recorded/README.md). In the expandable
 * run, empty_cache unmaps 4 MiB of the small pool's expandable segment that the dump shows mapped
 * again as 2 MiB: the start state must give those pages back to the small pool, not guess the
 * pool from the range's size, or the replay never unmaps them.
 */
const RECORDED = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'recorded');
const recorded = (readdirSync(RECORDED, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.pickle'))
  .sort();

describe('simulate fidelity on the GPU recordings (recorded settings)', () => {
  it('finds them', () => expect(recorded.length).toBeGreaterThan(100));
  it('replays every segment event of every recording exactly', () => {
    const off: string[] = [];
    for (const file of recorded) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(RECORDED, file))));
      for (const f of fidelity(s)) {
        const exact =
          f.matched_segment_events === f.recorded_segment_events &&
          f.simulated_segment_events === f.recorded_segment_events &&
          f.max_reserved_deviation_bytes === 0 &&
          f.matched_final_segments === f.recorded_final_segments &&
          f.simulated_final_segments === f.recorded_final_segments;
        if (!exact) off.push(line(file, f));
      }
    }
    expect(off).toEqual([]);
  });
});
