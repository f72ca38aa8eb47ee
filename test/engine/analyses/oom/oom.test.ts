import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../../scripts/synth/index.js';
import { OOM_CAUSES } from '../../../../scripts/synth/oom-plant.js';
import { oomReports } from '../../../../src/engine/analyses/oom/oom.js';
import { formatBytes, formatBytesPair } from '../../../../src/engine/base/format.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const SEG = 0x7f0000000000;

/** A 100 MiB large-pool segment whose blocks alternate as given, then an oom for `request`. */
function snapshot(blocks: [number, 'active_allocated' | 'inactive'][], request: number, deviceFree: number) {
  let at = SEG;
  const list = blocks.map(([size, state]) => {
    const b = { address: at, size, requested_size: state === 'inactive' ? 0 : size, state, frames: [] };
    at += size;
    return b;
  });
  const total = blocks.reduce((n, [size]) => n + size, 0);
  const json = {
    segments: [
      { device: 0, address: SEG, total_size: total, stream: 0, segment_type: 'large', blocks: list },
    ],
    device_traces: [[{ action: 'oom', device_free: deviceFree, size: request, stream: 0, time_us: 5 }]],
  };
  const s = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(json)));
  return { s, d: s.devices[0]! };
}

const alternating = Array.from(
  { length: 20 },
  (_, i) => [5 * MiB, i % 2 ? 'inactive' : 'active_allocated'] as [number, 'active_allocated' | 'inactive'],
);
const packed: [number, 'active_allocated' | 'inactive'][] = [
  [98 * MiB, 'active_allocated'],
  [2 * MiB, 'inactive'],
];

describe('oom verdicts on planted states', () => {
  // These planted devices are tiny (100 MiB reserved): without their capacity, most of any real
  // GPU would be unaccounted for, so each test says the GPU is that small.
  it('fragmentation: 50 MiB cached, but no free block of 20 MiB', () => {
    const { s, d } = snapshot(alternating, 20 * MiB, 10 * MiB);
    const [r] = oomReports(s, d, 110 * MiB);
    expect(r!.verdict).toBe('fragmentation');
    expect(r!.cached_free_bytes).toBe(50 * MiB);
    expect(r!.largest_free_block).toBe(5 * MiB);
    expect(r!.exact_free_blocks).toBe(true);
    expect(r!.settings.join(' ')).toMatch(/expandable_segments:True/);
  });

  it('does not suggest expandable segments to a run that already had them', () => {
    const { s, d } = snapshot(alternating, 20 * MiB, 10 * MiB);
    s.allocatorSettings = { ...s.allocatorSettings, expandable_segments: true };
    const [r] = oomReports(s, d, 110 * MiB);
    expect(r!.verdict).toBe('fragmentation');
    expect(r!.suggestions.map((x) => x.setting)).not.toContain('expandable_segments:True');
  });

  it('exhaustion: 2 MiB cached + 10 MiB free < 20 MiB requested', () => {
    const { s, d } = snapshot(packed, 20 * MiB, 10 * MiB);
    const [r] = oomReports(s, d, 110 * MiB);
    expect(r!.verdict).toBe('exhaustion');
    expect(r!.explanation.join(' ')).toMatch(/2\.00 MiB cached \+ 10\.0 MiB free < 20\.0 MiB requested/);
  });

  it('outside PyTorch: with the capacity, 3 GiB are held by something else', () => {
    const { s, d } = snapshot(packed, 20 * MiB, 10 * MiB);
    const [r] = oomReports(s, d, 100 * MiB + 10 * MiB + 3 * GiB);
    expect(r!.outside_bytes).toBe(3 * GiB);
    expect(r!.verdict).toBe('outside PyTorch');
  });

  it('not out of device memory when CUDA reported enough free', () => {
    const { s, d } = snapshot(packed, 20 * MiB, 30 * MiB);
    expect(oomReports(s, d)[0]!.verdict).toBe('not out of device memory');
  });

  it('checks the dump-time state against a capacity when the trace has no oom', () => {
    const json = JSON.stringify({
      segments: [
        {
          device: 0,
          address: SEG,
          total_size: 100 * MiB,
          stream: 0,
          segment_type: 'large',
          blocks: alternating.map(([size, state], i) => ({
            address: SEG + i * 5 * MiB,
            size,
            requested_size: size,
            state,
          })),
        },
      ],
      device_traces: [[]],
    });
    const s = loadSnapshotBytes(new TextEncoder().encode(json));
    const [r] = oomReports(s, s.devices[0]!, 110 * MiB, 20 * MiB);
    expect(r!.entry).toBe(-1);
    expect(r!.device_free_bytes).toBe(10 * MiB);
    expect(r!.verdict).toBe('fragmentation');
  });
});

describe('memlens oom', () => {
  it('prints the verdict, the arithmetic and what would help', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memlens-oom-'));
    const file = join(dir, 'frag.json');
    const { json } = fragmentationJson();
    writeFileSync(file, json);
    const cli = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
    const r = spawnSync(process.execPath, [...NODE_FLAGS, cli, 'oom', '--capacity', '110MiB', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/oom at trace entry 0: fragmentation/);
    expect(r.stdout).toMatch(/would help:\n {4}· expandable_segments:True — /);
    const j = spawnSync(
      process.execPath,
      [...NODE_FLAGS, cli, 'oom', '--json', '--capacity', '110MiB', file],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(JSON.parse(j.stdout).files[0].devices[0].ooms[0].largest_free_block).toBe(5 * MiB);
  });
});

function fragmentationJson(): { json: string } {
  let at = SEG;
  const blocks = alternating.map(([size, state]) => {
    const b = { address: at, size, requested_size: state === 'inactive' ? 0 : size, state };
    at += size;
    return b;
  });
  return {
    json: JSON.stringify({
      segments: [
        { device: 0, address: SEG, total_size: 100 * MiB, stream: 0, segment_type: 'large', blocks },
      ],
      device_traces: [[{ action: 'oom', device_free: 10 * MiB, size: 20 * MiB, stream: 0 }]],
    }),
  };
}

/** The generator plants each cause with the figures its allocator model had at the OOM. */
describe('oom verdicts on generated runs with a planted cause', () => {
  const variants: { name: string; options: WriteOptions }[] = [
    { name: 'classic segments, 2 extra streams', options: { streams: 2 } },
    { name: 'expandable segments', options: { expandableSegments: true } },
  ];
  for (const cause of OOM_CAUSES) {
    for (const { name, options } of variants) {
      if (cause === 'fragmentation' && options.expandableSegments) continue;
      it(`${cause}, ${name}`, () => {
        const { bytes, expected } = generateSnapshotBytes({
          events: 3000,
          seed: 61,
          oomCause: cause,
          ...options,
        });
        const facts = expected.oom_causes![0]!;
        const s = loadSnapshotBytes(bytes);
        const reports = oomReports(s, s.devices[0]!, facts.capacity_bytes);
        expect(reports).toHaveLength(1);
        const r = reports[0]!;
        expect(r.verdict).toBe(facts.verdict);
        expect(r.requested_bytes).toBe(facts.requested_bytes);
        expect(r.device_free_bytes).toBe(facts.device_free_bytes);
        expect(r.outside_bytes).toBe(facts.outside_bytes);
        expect(r.cached_free_bytes).toBe(facts.cached_free_bytes);
        expect(r.largest_free_block).toBe(facts.largest_free_block);
        expect(r.exact_free_blocks).toBe(true);
        // The explanation leads with the sentence that proves this verdict, with its arithmetic.
        const fb = formatBytes;
        const lead = {
          fragmentation: `${fb(facts.cached_free_bytes)} + ${fb(facts.device_free_bytes)} free ≥ ${fb(facts.requested_bytes)}, but the largest free block`,
          exhaustion: `${fb(facts.cached_free_bytes)} cached + ${fb(facts.device_free_bytes)} free < ${fb(facts.requested_bytes)} requested: the live tensors needed more`,
          outside: `= ${fb(facts.outside_bytes)} held outside PyTorch's allocator (CUDA context, NCCL buffers, other processes): without it the request would have fit (${fb(facts.outside_bytes)} + ${fb(facts.device_free_bytes)} free ≥ ${fb(facts.requested_bytes)})`,
        }[cause];
        expect(r.explanation[0]).toContain(lead);
        if (cause === 'exhaustion') expect(r.explanation[0]).toMatch(/^\S+ \S+ cached/);
        if (cause !== 'exhaustion') expect(r.explanation.join(' ')).not.toMatch(/live tensors needed more/);
        // Without the capacity the memory outside PyTorch is unknown. Where reserved + free is far
        // below any current GPU, both readings are given and the capacity decides.
        const blind = oomReports(s, s.devices[0]!)[0]!;
        if (cause === 'outside') {
          expect(blind.verdict).toBe('undetermined');
          expect(blind.readings.map((x) => x.verdict)).toEqual(['outside PyTorch', 'exhaustion']);
          expect(blind.explanation[0]).toMatch(/give it with --capacity/);
          expect(blind.explanation.join(' ')).not.toMatch(/^\S+ \S+ cached/);
          expect(blind.deciding_capacity_bytes).toBeLessThanOrEqual(facts.capacity_bytes);
        } else {
          expect(blind.verdict).toBe(facts.verdict);
          expect(blind.explanation.at(-1)).toMatch(/pass --capacity/);
        }
      });
    }
  }

  it('an oom followed by more allocations: free blocks estimated from the state at the entry', () => {
    const { bytes, expected } = generateSnapshotBytes({
      events: 3000,
      seed: 62,
      streams: 2,
      oomCause: 'fragmentation',
      pendingFrees: true,
    });
    const facts = expected.oom_causes![0]!;
    const s = loadSnapshotBytes(bytes);
    const r = oomReports(s, s.devices[0]!)[0]!;
    expect(r.entry).toBeLessThan(s.devices[0]!.trace.length - 1);
    expect(r.exact_free_blocks).toBe(false);
    expect(r.verdict).toBe('fragmentation');
    expect(r.largest_free_block).toBe(facts.largest_free_block);
    expect(r.cached_free_bytes).toBe(facts.cached_free_bytes);
  });
});

describe('oom: the allocator reuses a block only on its own stream', () => {
  it('names the larger free block that sat on another stream', () => {
    const STREAM = 0x5500000a00;
    const seg = (address: number, stream: number, blocks: [number, string][]) => {
      let at = address;
      return {
        device: 0,
        address,
        total_size: blocks.reduce((n, [size]) => n + size, 0),
        stream,
        segment_type: 'large',
        blocks: blocks.map(([size, state]) => {
          const b = { address: at, size, requested_size: state === 'inactive' ? 0 : size, state };
          at += size;
          return b;
        }),
      };
    };
    const json = {
      segments: [
        seg(SEG, 0, [
          [20 * MiB, 'active_allocated'],
          [8 * MiB, 'inactive'],
          [20 * MiB, 'active_allocated'],
        ]),
        seg(SEG + GiB, STREAM, [
          [20 * MiB, 'active_allocated'],
          [40 * MiB, 'inactive'],
        ]),
      ],
      device_traces: [[{ action: 'oom', device_free: 2 * MiB, size: 30 * MiB, stream: 0, time_us: 5 }]],
    };
    const s = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(json)));
    const r = oomReports(s, s.devices[0]!, 110 * MiB)[0]!;
    expect(r.largest_free_block).toBe(8 * MiB);
    expect(r.cached_free_bytes).toBe(48 * MiB);
    expect(r.free_lists.map((g) => [g.stream, g.largest_free_block])).toEqual([
      [STREAM, 40 * MiB],
      [0, 8 * MiB],
    ]);
    expect(r.verdict).toBe('fragmentation');
    expect(r.explanation.join(' ')).toMatch(/40\.0 MiB sat in the large pool, stream 0x5500000a00 list/);
  });
});

describe('memlens oom on a generated OOM (built CLI)', () => {
  it('text and JSON', () => {
    const { bytes, expected } = generateSnapshotBytes({ events: 2000, seed: 63, oomCause: 'outside' });
    const facts = expected.oom_causes![0]!;
    const dir = mkdtempSync(join(tmpdir(), 'memlens-oom-'));
    const file = join(dir, 'outside.pickle');
    writeFileSync(file, bytes);
    const cli = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
    const run = (...args: string[]) =>
      spawnSync(
        process.execPath,
        [...NODE_FLAGS, cli, 'oom', '--capacity', String(facts.capacity_bytes), ...args, file],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
    const text = run();
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(
      /: outside PyTorch\n {4}capacity [\s\S]*? held outside PyTorch's allocator[\s\S]*?: without it the request would have fit/,
    );
    expect(text.stdout).toMatch(/free in the large pool, stream 0 list: [\s\S]*? \(the request's\s+stream\)/);
    const r = JSON.parse(run('--json').stdout).files[0].devices[0].ooms[0];
    expect(r.outside_bytes).toBe(facts.outside_bytes);
    expect(r.free_lists[0].largest_free_block).toBe(facts.largest_free_block);
  });
});

describe('byte counts compared in words', () => {
  it('are exact when rounding would print them the same', () => {
    expect(formatBytesPair(1_127_428_608, 1_129_576_448)).toEqual(['1,127,428,608 B', '1,129,576,448 B']);
    expect(formatBytesPair(1 * GiB, 2 * GiB)).toEqual(['1.00 GiB', '2.00 GiB']);
    expect(formatBytesPair(512, 512)).toEqual(['512 B', '512 B']);
  });
});
