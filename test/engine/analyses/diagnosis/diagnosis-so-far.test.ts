import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { diagnoseFile, diagnoseFileSoFar } from '../../../../src/engine/analyses/diagnosis/diagnosis.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';

/**
 * The diagnosis as it grows (what the web app shows while the walks over the trace run): the
 * model's answers (an OOM, the peak) come first with the slower analyses named as pending, each
 * answer ranks what is known, and the last is diagnoseFile's, exactly.
 */
const MiB = 2 ** 20;

describe('diagnoseFileSoFar', () => {
  const s = loadSnapshotBytes(
    generateSnapshotBytes({
      events: 6000,
      seed: 7,
      devices: 3,
      leakBytes: 8 * MiB,
      devicePlants: { 2: { oomCause: 'fragmentation' } },
    }).bytes,
  );
  const steps = [...diagnoseFileSoFar(s, s.devices, { file: 'f.pickle' })];

  it('ends with diagnoseFile, nothing pending', () => {
    const last = steps[steps.length - 1]!;
    expect(last.pending).toEqual([]);
    expect(last.leadKnown).toBe(true);
    expect({ devices: last.devices, order: last.order }).toEqual(
      diagnoseFile(s, s.devices, { file: 'f.pickle' }),
    );
  });

  it('the OOM first, before leaks, GC bursts and fragmentation are looked at', () => {
    // One answer per analysis per device.
    expect(steps).toHaveLength(6 * 3);
    const afterOoms = steps[2]!;
    expect(afterOoms.pending).toEqual([
      'the peak',
      'what the file cannot tell',
      'leaks',
      'GC bursts',
      'fragmentation',
    ]);
    const lead = afterOoms.order[0]!;
    expect(lead.device).toBe(2);
    expect(afterOoms.devices[2]!.findings[lead.finding]!.kind).toBe('oom');
    expect(afterOoms.devices.flatMap((d) => d.findings.map((f) => f.kind))).not.toContain('leak');
    // No answer before every device's OOMs are in may be landed on; from then on the OOM leads.
    expect(steps.slice(0, 2).map((x) => x.leadKnown)).toEqual([false, false]);
    expect(steps.slice(2).every((x) => x.leadKnown)).toBe(true);
    const afterPeaks = steps[5]!;
    expect(afterPeaks.devices.every((d) => d.findings.some((f) => f.kind === 'peak'))).toBe(true);
    expect(afterPeaks.pending[0]).toBe('what the file cannot tell');
  });

  it('a leak joins the ranking when its analysis answers, below the OOM known before it', () => {
    const leaky = loadSnapshotBytes(
      generateSnapshotBytes({ events: 20_000, seed: 41, leakBytes: 3 * MiB, oomCause: 'exhaustion' }).bytes,
    );
    const kinds = [...diagnoseFileSoFar(leaky, leaky.devices)].map((x) => ({
      pending: x.pending,
      kinds: x.devices[0]!.findings.map((f) => f.kind),
    }));
    expect(kinds[0]).toEqual({
      pending: ['the peak', 'what the file cannot tell', 'leaks', 'GC bursts', 'fragmentation'],
      kinds: ['oom'],
    });
    expect(kinds[1]!.kinds).toEqual(['oom', 'peak']);
    expect(kinds[2]!.kinds).not.toContain('leak');
    expect(kinds[3]!.pending).toEqual(['GC bursts', 'fragmentation']);
    expect(kinds[3]!.kinds[0]).toBe('oom');
    expect(kinds[3]!.kinds).toContain('leak');
  });

  it('a file with no OOM lands only when every analysis is in', () => {
    const clean = loadSnapshotBytes(generateSnapshotBytes({ events: 3000, seed: 5, devices: 2 }).bytes);
    const known = [...diagnoseFileSoFar(clean, clean.devices)].map((x) => x.leadKnown);
    expect(known.slice(0, -1).every((k) => !k)).toBe(true);
    expect(known[known.length - 1]).toBe(true);
  });
});
