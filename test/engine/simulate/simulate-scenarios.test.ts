import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { Action } from '../../../src/engine/model/trace-columns.js';
import { replayDevice } from '../../../src/engine/simulate/replay.js';
import { applyConf, defaultSettings } from '../../../src/engine/simulate/settings.js';
import { simulate } from '../../../src/engine/simulate/simulate.js';
import { NODE_FLAGS } from '../../../src/node/node-flags.js';
import { MiB, plantedSnapshot, type Step } from '../../helpers/planted-requests.js';

/** Segment events and ooms of a what-if replay, as [action, MiB] pairs. */
function replayEvents(steps: Step[], conf: string, capacity: number, version = '2.6') {
  const s = plantedSnapshot(steps);
  const r = replayDevice(s, s.devices[0]!, {
    settings: applyConf(defaultSettings(version), conf),
    capacity,
    recorded: false,
    allEvents: false,
  });
  const log = r.allocator.log;
  const events: [string, number][] = [];
  for (let i = 0; i < log.length; i++) {
    events.push([s.traceColumns.actionNames[log.action[i]!]!, log.size[i]! / MiB]);
  }
  return { events, stats: r.allocator.stats };
}

describe('simulate: planted scenarios with answers from allocator-spec.md', () => {
  // A 60 MiB block is freed; a 20 MiB request splits it (remainder 40 MiB > 1 MiB) and keeps it
  // busy; a 50 MiB request finds no block. Classic: a new 50 MiB segment would need 110 MiB of a
  // 100 MiB device, the flush frees nothing (the segment is split): oom, 40 MiB cached + 40 MiB
  // free but no single block. Expandable (20 MiB pages): the free 40 MiB before the unmapped tail
  // grows by one page: 80 MiB reserved, no oom.
  const fragmentation: Step[] = [
    ['a', 'A', 60 * MiB],
    ['f', 'A'],
    ['a', 'B', 20 * MiB],
    ['a', 'C', 50 * MiB],
  ];

  it('fragmentation OOM that expandable segments avoid', () => {
    const classic = replayEvents(fragmentation, '', 100 * MiB);
    expect(classic.events).toEqual([
      ['segment_alloc', 60],
      ['oom', 50],
    ]);
    expect(classic.stats.reserved).toBe(60 * MiB);
    const expandable = replayEvents(fragmentation, 'expandable_segments:True', 100 * MiB);
    expect(expandable.events).toEqual([
      ['segment_map', 60],
      ['segment_map', 20],
    ]);
    expect(expandable.stats.ooms).toBe(0);
    expect(expandable.stats.peakReserved).toBe(80 * MiB);
  });

  // 200 MiB freed, then 30 MiB: by default it splits the cached 200 MiB block, so 190 MiB needs a
  // new segment (390 MiB). With max_split_size_mb:100 the 30 MiB request may not use an oversize
  // block (new 30 MiB segment) and 190 MiB reuses the 200 MiB one whole (200 < 190 + 20): 230 MiB.
  const oversize: Step[] = [
    ['a', 'A', 200 * MiB],
    ['f', 'A'],
    ['a', 'B', 30 * MiB],
    ['a', 'C', 190 * MiB],
  ];

  it('max_split_size_mb lowers peak reserved', () => {
    const plain = replayEvents(oversize, '', Number.POSITIVE_INFINITY);
    expect(plain.stats.peakReserved).toBe(390 * MiB);
    const split = replayEvents(oversize, 'max_split_size_mb:100', Number.POSITIVE_INFINITY);
    expect(split.events).toEqual([
      ['segment_alloc', 200],
      ['segment_alloc', 30],
    ]);
    expect(split.stats.peakReserved).toBe(230 * MiB);
  });

  // Device 1000 MiB, fraction 0.8 → 800 MiB allowed, threshold 0.4 → 320 MiB. A (200) and B (250)
  // are freed whole. D (260) misses with 450 MiB reserved > 320: ages are A 2, B 1 (get_free_block
  // calls since each was freed), average 1.5, so only A's segment goes (target 130 ≤ 200), then
  // D gets a new segment: peak 510 MiB. Without GC nothing is released: 710 MiB.
  const gc: Step[] = [
    ['a', 'A', 200 * MiB],
    ['f', 'A'],
    ['a', 'B', 250 * MiB],
    ['f', 'B'],
    ['a', 'D', 260 * MiB],
  ];
  const fraction = 'per_process_memory_fraction:0.8';

  it('garbage_collection_threshold releases the oldest cached blocks at the memory fraction', () => {
    const withGc = replayEvents(gc, `${fraction},garbage_collection_threshold:0.4`, 1000 * MiB);
    expect(withGc.events).toEqual([
      ['segment_alloc', 200],
      ['segment_alloc', 250],
      ['segment_free', 200],
      ['segment_alloc', 260],
    ]);
    expect(withGc.stats.peakReserved).toBe(510 * MiB);
    expect(withGc.stats.retries).toBe(0);
    const without = replayEvents(gc, fraction, 1000 * MiB);
    expect(without.stats.peakReserved).toBe(710 * MiB);
    expect(without.stats.segmentFrees).toBe(0);
    // From 2.10 a fraction of 1.0 no longer turns GC on (PR #161035); before, any call did.
    const full = 'per_process_memory_fraction:1,garbage_collection_threshold:0.4';
    expect(replayEvents(gc, full, 800 * MiB, '2.6').stats.segmentFrees).toBe(1);
    expect(replayEvents(gc, full, 800 * MiB, '2.10').stats.segmentFrees).toBe(0);
  });

  it('roundup_power2_divisions changes block and segment sizes as the worked examples say', () => {
    const steps: Step[] = [
      ['a', 'A', 88_080_384],
      ['a', 'B', 1200],
    ];
    const plain = replayEvents(steps, '', Number.POSITIVE_INFINITY);
    expect(plain.events).toEqual([
      ['segment_alloc', 84],
      ['segment_alloc', 2],
    ]);
    const divided = replayEvents(
      steps,
      'roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]',
      Infinity,
    );
    expect(divided.events).toEqual([
      ['segment_alloc', 88],
      ['segment_alloc', 2],
    ]);
    expect(divided.stats.peakAllocated).toBe(92_274_688 + 1536);
  });

  it('side by side: the recorded settings and the what-if run, ranked in a sweep', () => {
    const s = plantedSnapshot(fragmentation);
    const r = simulate(s, s.devices, { set: 'expandable_segments:True', capacity: 100 * MiB, sweep: true });
    const d = r.devices[0]!;
    expect(d.recorded.oom).toBe(true);
    expect(d.recorded.first_oom_entry).toBe(4);
    expect(d.what_if?.oom).toBe(false);
    expect(d.sweep?.[0]?.oom).toBe(false);
    expect(d.sweep?.at(-1)?.oom).toBe(true);
  });
});

const CLI = join(import.meta.dirname, '..', '..', '..', 'dist', 'cli', 'main.js');
const memlens = (...args: string[]) =>
  spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

describe.skipIf(!existsSync(CLI))('memlens simulate (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-simulate-'));
  const file = join(dir, 'planted.json');
  writeFileSync(
    file,
    JSON.stringify({
      segments: [
        {
          device: 0,
          address: 0x10000000,
          total_size: 60 * MiB,
          stream: 0,
          segment_type: 'large',
          blocks: [
            { address: 0x10000000, size: 20 * MiB, requested_size: 20 * MiB, state: 'active_allocated' },
            { address: 0x10000000 + 20 * MiB, size: 40 * MiB, requested_size: 0, state: 'inactive' },
          ],
        },
      ],
      device_traces: [
        [
          { action: 'segment_alloc', addr: 0x10000000, size: 62914560, stream: 0 },
          { action: 'alloc', addr: 0x10000000, size: 60 * MiB, stream: 0 },
          { action: 'free_requested', addr: 0x10000000, size: 60 * MiB, stream: 0 },
          { action: 'free_completed', addr: 0x10000000, size: 60 * MiB, stream: 0 },
          { action: 'alloc', addr: 0x10000000, size: 20 * MiB, stream: 0 },
          { action: 'oom', device_free: 40 * MiB, size: 50 * MiB, stream: 0 },
        ],
      ],
    }),
  );

  // The recorded run of the fragmentation scenario above, as PyTorch would trace it.
  it('takes the capacity from the oom and shows expandable segments avoiding it', () => {
    const r = memlens('simulate', file, '--set', 'expandable_segments:True', '--json');
    expect(r.status, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout).files[0].devices[0];
    expect(d.capacity_source).toBe('oom');
    expect(d.capacity_bytes).toBe(100 * MiB);
    expect(d.recorded.oom).toBe(true);
    expect(d.what_if.oom).toBe(false);
    expect(d.fidelity.segment_events_matched_percent).toBe(100);
  });

  it('-o writes the simulated run as a snapshot that memlens reads back', () => {
    const out = join(dir, 'sim.pickle');
    const r = memlens('simulate', file, '--set', 'expandable_segments:True', '-o', out);
    expect(r.status, r.stderr).toBe(0);
    const s = loadSnapshotBytes(new Uint8Array(readFileSync(out)));
    const actions = [...s.devices[0]!.trace.action];
    expect(actions.filter((a) => a === Action.segment_map)).toHaveLength(2);
    expect(s.tables.segments.every((seg) => seg.expandable)).toBe(true);
    expect(s.allocatorSettings?.expandable_segments).toBe(true);
  });

  it('bad settings: one line, exit 2, no output file', () => {
    const out = join(dir, 'never.pickle');
    const r = memlens('simulate', file, '--set', 'max_split_size_mb:abc', '-o', out);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });
});

/**
 * The dump maps 2 MiB of a small-pool expandable segment, its last 512 KiB free; the trace
 * unmaps the 4 MiB after it, so they were mapped and free when the window opened. Free blocks
 * never sit side by side in PyTorch: the 512 KiB and the 4 MiB were one free block, and a 768 KiB
 * request (too big for 512 KiB) splits it at its start, as recorded, not at the seam.
 */
describe('simulate: the start state of an expandable segment', () => {
  const base = 0x2a56000000;
  const KiB = 1024;
  type Entry = [string, number, number];

  /** A small-pool expandable recording: the dump's segments and a trace on stream 0 (addresses from `base`). */
  function recording(segments: object[], trace: Entry[]) {
    const json = {
      segments,
      device_traces: [
        trace.map(([action, addr, size], i) => ({
          action,
          addr: base + addr,
          size,
          stream: 0,
          time_us: i,
          frames: [],
        })),
      ],
      allocator_settings: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True', expandable_segments: true },
    };
    return loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(json)));
  }

  /** The recorded settings' replay, every event, addresses from `base`, sizes in KiB. */
  function replayed(trace: Entry[], segments: object[] = []): Entry[] {
    const s = recording(segments, trace);
    const log = replayDevice(s, s.devices[0]!, {
      settings: applyConf(defaultSettings('2.11'), 'expandable_segments:True'),
      capacity: Number.POSITIVE_INFINITY,
      recorded: true,
      allEvents: true,
    }).allocator.log;
    const events: Entry[] = [];
    for (let i = 0; i < log.length; i++) {
      events.push([s.traceColumns.actionNames[log.action[i]!]!, log.addr[i]! - base, log.size[i]! / KiB]);
    }
    return events;
  }

  const block = (offset: number, size: number, state: string) => ({
    address: base + offset,
    size,
    requested_size: state === 'inactive' ? 0 : size,
    state,
    frames: [],
  });

  it('merges the free blocks either side of pages unmapped later', () => {
    const dump = {
      device: 0,
      address: base,
      total_size: 2 * MiB,
      allocated_size: 1536 * KiB,
      active_size: 1536 * KiB,
      requested_size: 1536 * KiB,
      stream: 0,
      segment_type: 'small',
      segment_pool_id: [0, 0],
      is_expandable: true,
      frames: [],
      blocks: [
        block(0, MiB, 'active_allocated'),
        block(MiB, 512 * KiB, 'active_allocated'),
        block(1536 * KiB, 512 * KiB, 'inactive'),
      ],
    };
    const x = 1536 * KiB;
    const trace: Entry[] = [
      ['alloc', x, 768 * KiB],
      ['free_requested', x, 768 * KiB],
      ['free_completed', x, 768 * KiB],
      ['segment_unmap', 2 * MiB, 4 * MiB],
    ];
    expect(replayed(trace, [dump])).toEqual([
      ['alloc', 1536 * KiB, 768],
      ['free_requested', 1536 * KiB, 768],
      ['free_completed', 1536 * KiB, 768],
      ['segment_unmap', 2 * MiB, 4096],
    ]);
  });

  // The whole segment is unmapped in the window and gone at the dump, so no dump-time range names
  // its pool: 4 MiB is no whole number of 20 MiB large pages, so these were small-pool pages
  // (2 MiB), and empty_cache unmaps all of them.
  it('gives pages of a segment gone at the dump the pool their size allows', () => {
    const trace: Entry[] = [
      ['free_requested', 0, 512 * KiB],
      ['free_completed', 0, 512 * KiB],
      ['segment_unmap', 0, 4 * MiB],
    ];
    expect(replayed(trace)).toEqual([
      ['free_requested', 0, 512],
      ['free_completed', 0, 512],
      ['segment_unmap', 0, 4096],
    ]);
  });
});
