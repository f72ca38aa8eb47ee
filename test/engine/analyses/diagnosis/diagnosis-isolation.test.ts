import { describe, expect, it, vi } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { diagnose } from '../../../../src/engine/analyses/diagnosis/diagnosis.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';

/**
 * Each analysis of the diagnosis runs on its own: one that throws on a file becomes a warning
 * finding naming it, and the rest of the report still shows. The GC burst analysis is made to
 * throw here, as a defect in it would on some file.
 */
vi.mock('../../../../src/engine/analyses/gc/gc-bursts.js', async (original) => ({
  ...(await original<object>()),
  gcBurstsOf: () => {
    throw new Error('index 7 out of range');
  },
}));

describe('the diagnosis runs each analysis in isolation', () => {
  it('a throwing analysis is a named warning; the OOM, the peak and the checks still show', () => {
    const s = loadSnapshotBytes(
      generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes,
    );
    const r = diagnose(s, s.devices[0]!, { file: 'oom.pickle' });
    expect(r.findings[0]!.kind).toBe('oom');
    expect(r.findings.map((f) => f.kind)).toContain('peak');
    const failed = r.findings.filter((f) => /analysis failed/.test(f.headline));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      kind: 'warning',
      severity: 'note',
      command: 'memlens summary oom.pickle',
    });
    expect(failed[0]!.headline).toBe(
      'The GC burst analysis failed on this device (index 7 out of range); the other findings stand.',
    );
    // The analyses after it still ran: fragmentation answered, as a finding or as checked.
    expect(r.findings.some((f) => f.kind === 'fragmentation') || /fragmentation/.test(r.checked.join())).toBe(
      true,
    );
  });
});
