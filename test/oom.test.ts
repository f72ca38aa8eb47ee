import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../src/cli/node-flags.js';
import { oomReports } from '../src/engine/analyses/oom.js';
import { loadSnapshotBytes } from '../src/engine/load.js';

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
  it('fragmentation: 50 MiB cached, but no free block of 20 MiB', () => {
    const { s, d } = snapshot(alternating, 20 * MiB, 10 * MiB);
    const [r] = oomReports(s, d);
    expect(r!.verdict).toBe('fragmentation');
    expect(r!.cached_free_bytes).toBe(50 * MiB);
    expect(r!.largest_free_block).toBe(5 * MiB);
    expect(r!.exact_free_blocks).toBe(true);
    expect(r!.settings.join(' ')).toMatch(/expandable_segments:True/);
  });

  it('exhaustion: 2 MiB cached + 10 MiB free < 20 MiB requested', () => {
    const { s, d } = snapshot(packed, 20 * MiB, 10 * MiB);
    const [r] = oomReports(s, d);
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
    const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
    const r = spawnSync(process.execPath, [...NODE_FLAGS, cli, 'oom', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/oom at trace entry 0: fragmentation/);
    expect(r.stdout).toMatch(/would help: expandable_segments:True/);
    const j = spawnSync(process.execPath, [...NODE_FLAGS, cli, 'oom', '--json', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
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
