import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  type ExpectedFigures,
  generateSnapshotBytes,
  type WriteOptions,
} from '../../../../scripts/synth/index.js';
import { summarize } from '../../../../src/engine/analyses/summary/summary.js';
import { loadSnapshot, loadSnapshotBytes } from '../../../../src/engine/load/load.js';

/**
 * What the corpus lacks, planted by the project's generator, whose expected figures come from
 * its own allocator model (not from decoding the file): memlens must match them exactly.
 */
const SCENARIOS: [string, WriteOptions][] = [
  ['steady training loop', { events: 4000, seed: 11 }],
  ['OOM at the end', { events: 3000, seed: 12, oom: true }],
  ['expandable segments', { events: 3000, seed: 13, expandableSegments: true }],
  ['two devices, three extra streams', { events: 2500, seed: 14, devices: 2, streams: 3 }],
  ['ring buffer overflowed', { events: 3000, seed: 15, ringBufferOverflow: true }],
  ['pending frees and a private pool', { events: 3000, seed: 16, pendingFrees: true, privatePool: true }],
  ['PyTorch 2.0 layout (history, no time_us)', { events: 2000, seed: 17, legacy: 'v2.0' }],
  ['bare list of segments', { events: 2000, seed: 18, legacy: 'list' }],
  ['protocol 2 (C++-pickler-like memo ops)', { events: 2000, seed: 19, protocol: 2 }],
  ['protocol 5 (Python 3.14)', { events: 2000, seed: 20, protocol: 5 }],
  ['JSON', { events: 2000, seed: 21, format: 'json' }],
  [
    'everything at once',
    {
      events: 5000,
      seed: 22,
      devices: 2,
      streams: 2,
      oom: true,
      expandableSegments: true,
      pendingFrees: true,
    },
  ],
];

function expectFigures(got: ReturnType<typeof summarize>, expected: ExpectedFigures): void {
  expect(got.devices.map((d) => d.device)).toEqual(expected.devices.map((d) => d.device));
  expected.devices.forEach((exp, i) => {
    const dev = got.devices[i] as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(exp))
      expect(dev[key], `device ${exp.device} ${key}`).toEqual(value);
  });
}

describe('generated scenarios: every figure equals the generator ground truth', () => {
  for (const [name, options] of SCENARIOS) {
    it(name, () => {
      const { bytes, expected } = generateSnapshotBytes(options);
      expectFigures(summarize(loadSnapshotBytes(bytes)), expected);
    });
  }

  it('gzip-compressed input gives the same figures', async () => {
    const { bytes, expected } = generateSnapshotBytes({ events: 3000, seed: 23, oom: true });
    const gz = gzipSync(bytes);
    const snapshot = await loadSnapshot(
      (async function* () {
        for (let i = 0; i < gz.length; i += 4096) yield gz.subarray(i, i + 4096);
      })(),
    );
    expectFigures(summarize(snapshot), expected);
  });

  it('reports the OOM and the overflowed ring buffer in words', () => {
    const oom = summarize(
      loadSnapshotBytes(generateSnapshotBytes({ events: 2000, seed: 24, oom: true }).bytes),
    );
    expect(oom.devices[0]!.ooms).toBe(1);
    const overflow = summarize(
      loadSnapshotBytes(generateSnapshotBytes({ events: 3000, seed: 25, ringBufferOverflow: true }).bytes),
    );
    expect(overflow.devices[0]!.warnings.join(' ')).toMatch(/ring buffer overflowed/);
    expect(overflow.devices[0]!.warnings.join(' ')).toMatch(/no alloc in it/);
  });

  it('keeps oom device_free and the streams of every entry', () => {
    const s = loadSnapshotBytes(
      generateSnapshotBytes({ events: 2500, seed: 26, oom: true, streams: 2 }).bytes,
    );
    const d = s.devices[0]!;
    const oomRow = [...d.trace.action].indexOf(8);
    expect(oomRow).toBeGreaterThan(0);
    expect(d.trace.deviceFree?.[oomRow]).toBeGreaterThanOrEqual(0);
    expect(summarize(s).devices[0]!.streams.length).toBe(3);
  });
});
