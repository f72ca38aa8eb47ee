import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { rankReplays } from '../../../src/engine/simulate/replay-summary.js';
import { simulate } from '../../../src/engine/simulate/simulate.js';
import { sweepPlan, sweepStep } from '../../../src/engine/simulate/sweep-steps.js';

/**
 * The web app's sweep runs one message per setting; ranked, its runs must be `simulate --sweep`'s,
 * on a file whose OOM was planted by fragmentation (so runs differ in OOM and in peak reserved).
 */
describe('sweep one run at a time', () => {
  const s = loadSnapshotBytes(
    generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes,
  );
  const d = s.devices[0]!;
  const stepwise = (o: { torchVersion?: string; capacity?: number }) =>
    rankReplays(sweepPlan(s, o).map((_, i) => sweepStep(s, d, i, o)));

  it('ranks the same runs as simulate --sweep, recorded settings first in the plan', () => {
    const whole = simulate(s, [d], { sweep: true }).devices[0]!;
    expect(stepwise({})).toEqual(whole.sweep);
    expect(sweepPlan(s)[0]).toBe(whole.recorded.settings);
    // The planted fragmentation OOM: the recorded settings fail, some other setting fits.
    expect(whole.recorded.oom).toBe(true);
    expect(whole.sweep![0]!.oom).toBe(false);
  });

  it('follows a given capacity and torch version as simulate does', () => {
    const o = { capacity: 200 * 2 ** 30, torchVersion: '2.3' };
    expect(stepwise(o)).toEqual(simulate(s, [d], { ...o, sweep: true }).devices[0]!.sweep);
    expect(stepwise(o).every((r) => !r.oom)).toBe(true);
  });

  it('refuses a run the plan does not have', () => {
    expect(() => sweepStep(s, d, sweepPlan(s).length)).toThrow(/no run/);
  });
});
