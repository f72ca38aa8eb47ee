/**
 * What the decoded files settle of a run's layout where the names cannot (settle-layout.ts):
 * Megatron-Bridge's `<stem>_<rank>` names against a hand-written loop's `snapshot_<i>`, and where
 * verl's window ends under profile_continuous_steps.
 */
import { describe, expect, it } from 'vitest';
import { renderRun } from '../../../../src/cli/commands/run-text.js';
import { cellResult } from '../../../../src/engine/analyses/run/cell-result.js';
import { type RunReport, runReport } from '../../../../src/engine/analyses/run/run-report.js';
import { columnOrder } from '../../../../src/engine/analyses/run/run-table.js';
import { discoverRun } from '../../../../src/engine/run-layout/discover.js';
import { smallSegment } from '../../../helpers/small-segment.js';
import { snapshotOf } from '../../../helpers/snapshot-of.js';

interface Dump {
  path: string;
  /** The process's trace: an alloc at each time (NaN: no time_us), addresses by `base`. */
  times: number[];
  device?: number;
  base?: number;
}

function resultOf({ times, device = 0, base = 1 << 20 }: Dump) {
  const trace = times.map((t, i) => ({
    action: 'alloc',
    addr: base + 4096 * i,
    size: 512,
    stream: 0,
    ...(Number.isNaN(t) ? {} : { time_us: t }),
    frames: [],
  }));
  const traces = Array.from({ length: device + 1 }, (_, d) => (d === device ? trace : []));
  const segment = {
    ...smallSegment(base, [{ state: 'active_allocated', requested: 512, size: 512 }]),
    device,
  };
  return cellResult(snapshotOf({ segments: [segment], device_traces: traces }));
}

function reportOf(dumps: Dump[]): RunReport {
  const byPath = new Map(dumps.map((d) => [d.path, d]));
  const run = discoverRun(dumps.map((d) => d.path));
  return runReport(
    'run',
    run,
    run.cells.map((cell) => ({ cell, result: resultOf(byPath.get(cell.path)!) })),
  );
}

const range = (from: number, n: number, step = 10) => Array.from({ length: n }, (_, i) => from + i * step);

describe('Megatron-Bridge <stem>_<rank> or a loop dumping snapshot_<i>', () => {
  it("reads one process's dumps, each continuing the last one's trace, as steps in sequence", () => {
    // for i in range(4): step(); torch.cuda.memory._dump_snapshot(f"snapshot_{i}.pickle")
    const r = reportOf(
      range(0, 4, 1).map((i) => ({ path: `snapshot_${i}.pickle`, times: range(1000, 3 * (i + 1)) })),
    );
    expect(r.snapshots.map((s) => [s.kind, s.rank, s.step])).toEqual([
      ['step', null, 0],
      ['step', null, 1],
      ['step', null, 2],
      ['step', null, 3],
    ]);
    expect(r.layout).toBe('names');
    expect(columnOrder(r.rows)).toEqual(['0', '1', '2', '3']);
    expect(new Set(r.rows.map((row) => row.lane_label))).toEqual(new Set(['rank 0']));
    expect(r.layout_doubts).toEqual([]);
  });

  it('keeps ranks on different devices as ranks, with no doubt', () => {
    const r = reportOf(
      range(0, 4, 1).map((i) => ({ path: `snapshot_${i}.pickle`, times: range(1000 + i, 6), device: i })),
    );
    expect(r.snapshots.map((s) => [s.kind, s.rank])).toEqual([
      ['end', 0],
      ['end', 1],
      ['end', 2],
      ['end', 3],
    ]);
    expect(r.layout).toBe('megatron-bridge');
    expect(r.layout_doubts).toEqual([]);
  });

  it('says "not certain" where every file is on one device and the traces cannot tell', () => {
    // Ranks with external_gpu_device_mapping (all on cuda:0), or a loop whose trace has no times.
    for (const timed of [true, false]) {
      const r = reportOf(
        range(0, 3, 1).map((i) => ({
          path: `run/snapshot_${i}.pickle`,
          times: timed ? range(1000 + 7 * i, 5) : range(Number.NaN, 3 * (i + 1)),
        })),
      );
      expect(r.snapshots.map((s) => s.rank)).toEqual([0, 1, 2]);
      expect(r.layout_doubts).toHaveLength(1);
      expect(r.layout_doubts[0]).toMatch(
        /^not certain: run\/snapshot_0\.pickle … run\/snapshot_2\.pickle .*cuda:0/,
      );
      expect(renderRun(r, 100)).toContain('not certain: run/snapshot_0.pickle');
    }
  });

  it('keeps files with no trace as ranks, not certain: Megatron-Bridge dumped with no history before 9e9e58b', () => {
    const r = reportOf(range(0, 3, 1).map((i) => ({ path: `snapshot_${i}.pickle`, times: [] })));
    expect(r.snapshots.map((s) => [s.kind, s.rank, s.layout])).toEqual([
      ['end', 0, 'megatron-bridge'],
      ['end', 1, 'megatron-bridge'],
      ['end', 2, 'megatron-bridge'],
    ]);
    expect(r.layout_doubts[0]).toMatch(/^not certain: .*\(no trace, no time_us, or the trace wrapped\)/);
  });
});

describe("verl's profile_continuous_steps", () => {
  // Step N runs from N*1000 to N*1000+900; post N is dumped after step N-1 ends (last entry
  // (N-1)*1000+900); the profiler's window when the last profiled step ends.
  const trace = (until: number) => range(1000, (until - 1000) / 100 + 1, 100);
  const run = (windowEnd: number, timed = true) =>
    [0, 1].flatMap((rank) => {
      const pid = 100 + rank;
      const times = (until: number) => (timed ? trace(until) : trace(until).map(() => Number.NaN));
      return [
        { path: `step3/torch_memory_rank${rank}_pid${pid}.pickle`, times: times(windowEnd * 1000 + 900) },
        ...[3, 4, 5, 6].map((n) => ({
          path: `step${n}/post_update_step${n}_rank${rank}_pid${pid}.pickle`,
          times: times((n - 1) * 1000 + 900),
        })),
      ].map((d) => ({ ...d, device: rank }));
    });

  it('places step3/ written at the end of step 5 after post 5, as steps 3-5', () => {
    const r = reportOf(run(5));
    expect(columnOrder(r.rows)).toEqual(['post 3', 'post 4', 'post 5', '3-5', 'post 6']);
    expect(r.snapshots.filter((s) => s.kind === 'step').map((s) => [s.step, s.last_step])).toEqual([
      [3, 5],
      [3, 5],
    ]);
    expect(r.layout_doubts).toEqual([]);
  });

  it("ends the windows of one folder together: a process with no post-update dumps ends where the actor's does", () => {
    // A critic worker's window: one _stop_profiling call stops every worker group.
    const critic = {
      path: 'step3/torch_memory_rank0_pid300.pickle',
      times: [Number.NaN, Number.NaN],
      device: 2,
    };
    const r = reportOf([...run(5), critic]);
    expect(r.snapshots.find((s) => s.pid === 300)).toMatchObject({ step: 3, last_step: 5 });
    expect(columnOrder(r.rows)).toEqual(['post 3', 'post 4', 'post 5', '3-5', 'post 6']);
    expect(r.layout_doubts).toEqual([]);
  });

  it('pairs a window with its own process: ranks on other hosts may share a pid', () => {
    // Rank 1 on another node has pid 100 too, and its every dump is 1 ms earlier than rank 0's.
    const shared = run(3).map((d) =>
      d.device === 1
        ? { ...d, path: d.path.replace('pid101', 'pid100'), times: d.times.map((t) => t - 1) }
        : d,
    );
    const r = reportOf(shared);
    expect(r.snapshots.filter((s) => s.kind === 'step').map((s) => [s.rank, s.step, s.last_step])).toEqual([
      [0, 3, 3],
      [1, 3, 3],
    ]);
  });

  it('keeps step3/ written at the end of step 3 before post 4', () => {
    const r = reportOf(run(3));
    expect(columnOrder(r.rows)).toEqual(['post 3', '3', 'post 4', 'post 5', 'post 6']);
    expect(r.layout_doubts).toEqual([]);
  });

  it('says "not certain" where the traces have no times', () => {
    const r = reportOf(run(5, false));
    expect(columnOrder(r.rows)).toEqual(['post 3', '3', 'post 4', 'post 5', 'post 6']);
    expect(r.layout_doubts).toHaveLength(1);
    expect(r.layout_doubts[0]).toMatch(/^not certain: verl's step3\/ dump is placed at the end of that step/);
  });
});
