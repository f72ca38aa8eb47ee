import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { simulate } from '../../../src/engine/simulate/simulate.js';
import { sweepPlan, sweepStep } from '../../../src/engine/simulate/sweep-steps.js';

const MiB = 2 ** 20;
const load = (o: WriteOptions) => {
  const s = loadSnapshotBytes(generateSnapshotBytes(o).bytes);
  return { s, d: s.devices[0]! };
};

/**
 * A sweep ranks by outcome: a run that hit its OOM before the big requests has a low peak that
 * means nothing, so it must rank below every run that got further, and peaks are compared only
 * between runs that got equally far.
 */
describe('simulate --sweep ranks by how far each run got', () => {
  const { s, d } = load({ events: 3000, seed: 61, oomCause: 'exhaustion' });
  const sweep = simulate(s, [d], { sweep: true }).devices[0]!.sweep!;

  it('a run that died earlier ranks below every run that got further', () => {
    const early = sweep.filter((r) => r.completed_entries < d.trace.length - 1);
    // Rounding the planted ballast up overflows the device: those runs die one entry early.
    expect(early.map((r) => r.settings)).toContain('roundup_power2_divisions:8');
    const reached = sweep.map((r) => r.completed_entries);
    expect(reached).toEqual([...reached].sort((a, b) => b - a));
    expect(sweep[0]!.completed_entries).toBe(d.trace.length - 1);
    // Their low peaks are only the memory they got to hold before failing.
    for (const r of early)
      expect(r.peak_reserved_completed_bytes).toBeLessThan(sweep[0]!.peak_reserved_completed_bytes);
  });

  it('says how far each run got, and orders runs that got equally far by peak reserved', () => {
    for (const r of sweep) {
      expect(r.trace_entries).toBe(d.trace.length);
      expect(r.completed_entries).toBe(r.oom ? r.first_oom_entry : r.trace_entries);
    }
    for (let i = 1; i < sweep.length; i++) {
      const [a, b] = [sweep[i - 1]!, sweep[i]!];
      if (a.completed_entries === b.completed_entries)
        expect(a.peak_reserved_completed_bytes).toBeLessThanOrEqual(b.peak_reserved_completed_bytes);
    }
  });
});

describe('same settings, same answer', () => {
  // An empty_cache() right before the planted comb's new segment looks like an OOM retry flush.
  const { s, d } = load({ events: 3000, seed: 61, oomCause: 'fragmentation' });
  const sim = simulate(s, [d], { sweep: true, set: '' }).devices[0]!;

  it('the sweep row of the recorded settings equals the plain simulate run', () => {
    const row = sim.sweep!.find((r) => r.settings === sim.recorded.settings)!;
    expect(row).toEqual(sim.recorded);
    expect(sweepStep(s, d, sweepPlan(s).indexOf(sim.recorded.settings))).toEqual(sim.recorded);
  });

  it('a what-if replay of the recorded settings gets as far, with the same peak', () => {
    const w = sim.what_if!;
    expect(w.settings).toBe(sim.recorded.settings);
    expect(w.first_oom_entry).toBe(sim.recorded.first_oom_entry);
    expect(w.peak_reserved_completed_bytes).toBe(sim.recorded.peak_reserved_completed_bytes);
  });
});

describe('fragmentation at peak', () => {
  it('is measured at the allocated peak, not where a warm cache first peaks reserved', () => {
    // A warm cache: one 1 GiB segment reserved before the window opens, 100 MiB of it live; the
    // trace allocates 600 MiB inside it and frees it. Reserved peaks before the first entry.
    const SEG = 0x7f0000000000;
    const json = {
      segments: [
        {
          device: 0,
          address: SEG,
          total_size: 1024 * MiB,
          stream: 0,
          segment_type: 'large',
          blocks: [
            { address: SEG, size: 100 * MiB, requested_size: 100 * MiB, state: 'active_allocated' },
            { address: SEG + 100 * MiB, size: 924 * MiB, requested_size: 0, state: 'inactive' },
          ],
        },
      ],
      device_traces: [
        ['alloc', 'free_requested', 'free_completed'].map((action, i) => ({
          action,
          addr: SEG + 100 * MiB,
          size: 600 * MiB,
          stream: 0,
          time_us: i,
        })),
      ],
    };
    const s = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(json)));
    const r = simulate(s, s.devices, {}).devices[0]!.recorded;
    expect(r.peak_allocated_bytes).toBe(700 * MiB);
    expect(r.fragmentation_at_peak_bytes).toBe(324 * MiB);
    expect(r.fragmentation_at_peak_percent).toBe(31.6);
    expect(r.fragmentation_at_oom_bytes).toBeNull();
  });

  it('is also given at the OOM', () => {
    const { s, d } = load({ events: 3000, seed: 61, oomCause: 'fragmentation' });
    const r = simulate(s, [d], {}).devices[0]!.recorded;
    const at = r.first_oom_entry;
    expect(r.fragmentation_at_oom_bytes).toBeGreaterThanOrEqual(
      d.totals.reserved[at]! - d.totals.allocated[at]! - 2 ** 30,
    );
    expect(r.fragmentation_at_oom_bytes).toBeGreaterThan(0);
  });
});

describe('capacity from the recording', () => {
  it('is never below what the recording reserved before its oom (memory outside PyTorch grew)', () => {
    const { s, d } = load({ events: 3000, seed: 61, oomCause: 'outside' });
    const sim = simulate(s, [d], {}).devices[0]!;
    const oomAt = d.trace.length - 1;
    const atOom = d.totals.reserved[oomAt]! + d.trace.deviceFree![oomAt]!;
    expect(sim.capacity_source).toBe('recorded peak');
    expect(sim.capacity_at_oom_bytes).toBe(atOom);
    expect(sim.capacity_bytes).toBe(d.totals.peak.reserved);
    expect(d.totals.reserved[sim.capacity_peak_entry]).toBe(d.totals.peak.reserved);
    // The recorded settings replay up to the recorded oom instead of failing where the program did not.
    expect(sim.recorded.completed_entries).toBeGreaterThanOrEqual(oomAt);
    // And it reproduces every recorded segment event (with reserved + free at the oom it did
    // not); the retried request, which fits now, may add its own segment after them.
    const f = sim.fidelity;
    expect(f.matched_segment_events).toBe(f.recorded_segment_events);
    expect(f.first_mismatch?.simulated?.entry ?? oomAt).toBeGreaterThanOrEqual(oomAt);
  });
});
