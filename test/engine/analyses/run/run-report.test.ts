import { describe, expect, it } from 'vitest';
import { generateRun, type RunOptions } from '../../../../scripts/synth/run.js';
import { cellResult } from '../../../../src/engine/analyses/run/cell-result.js';
import { type RunReport, runReport } from '../../../../src/engine/analyses/run/run-report.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { discoverRun } from '../../../../src/engine/run-layout/discover.js';

const MiB = 2 ** 20;

function reportOf(o: RunOptions): RunReport {
  const files = generateRun(o);
  const bytes = new Map(files.map((f) => [f.path, f.bytes]));
  const run = discoverRun(files.map((f) => f.path));
  const snapshots = run.cells.map((cell) => ({
    cell,
    result: cellResult(loadSnapshotBytes(bytes.get(cell.path)!)),
  }));
  return runReport('run', run, snapshots);
}

describe('memlens run: which rank and which step went wrong', () => {
  it('flags nothing on a clean run of 8 ranks x 10 steps', () => {
    const r = reportOf({ ranks: 8, windows: 10, seed: 7 });
    expect(r.snapshots).toHaveLength(80);
    expect(r.outliers).toEqual([]);
    expect(r.growth).toEqual([]);
    expect(r.ooms).toEqual([]);
  });

  const planted = reportOf({
    ranks: 6,
    windows: 8,
    seed: 3,
    extraBuffer: { rank: 3, bytes: 512 * MiB, step: 4 },
    growth: { rank: 5, bytes: 16 * MiB },
    oom: { rank: 2, cause: 'exhaustion' },
  });

  it('names the rank holding an extra buffer from its step on, and the site that holds it', () => {
    const extra = planted.outliers.filter(
      (o) => o.axis === 'ranks' && o.rank === 3 && o.figure === 'allocated',
    );
    expect(extra).toHaveLength(1);
    expect(extra[0]!.steps).toEqual({ first: 4, last: 8 });
    expect(extra[0]!.delta).toBeGreaterThan(500 * MiB);
    expect(extra[0]!.delta).toBeLessThan(530 * MiB);
    expect(extra[0]!.blame[0]!.frames[0]!.name).toBe('allocate_rank_buffer');
    expect(extra[0]!.blame[0]!.delta_bytes).toBe(512 * MiB);
    const jump = planted.outliers.filter((o) => o.axis === 'steps' && o.rank === 3);
    expect(jump.map((o) => o.steps.first)).toEqual([4]);
    // Whatever else stands out is on a planted rank (the growing rank drifts away from the others).
    expect(planted.outliers.every((o) => o.rank === 3 || o.rank === 5)).toBe(true);
  });

  it('names the site that grows window after window, from which step, by how much, on which rank', () => {
    expect(planted.growth).toHaveLength(1);
    const g = planted.growth[0]!;
    expect(g.frames[0]).toMatchObject({ name: 'train_step', line: 218 });
    expect(g.ranks.map((r) => r.rank)).toEqual([5]);
    expect(g.ranks[0]!.first_step).toBe(1);
    expect(g.ranks[0]!.bytes_per_step).toBe(16 * MiB);
  });

  it('places the OOM dump after the last window and explains it', () => {
    expect(planted.ooms).toHaveLength(1);
    expect(planted.ooms[0]).toMatchObject({ rank: 2, after_step: 8, in_step: null });
    expect(planted.ooms[0]!.devices[0]!.reports[0]!.verdict).toBe('exhaustion');
  });
});
