/**
 * A test per row of docs/producers.md "Run layouts": files named exactly as each producer's code
 * names them (src/engine/run-layout/layouts.ts cites the source), each placed with its rank, step, kind
 * and, for torchft, its replica.
 */
import { describe, expect, it } from 'vitest';
import { discoverRun, type RunCell } from '../../../src/engine/run-layout/discover.js';

const placed = (paths: string[]) => discoverRun(paths).cells.map(brief);

function brief(c: RunCell): string {
  const steps =
    c.steps === null
      ? '-'
      : c.steps.first === c.steps.last
        ? `${c.steps.first}`
        : `${c.steps.first}-${c.steps.last}`;
  const replica = c.replica === null ? '' : ` replica ${c.replica}`;
  return `${c.layout} ${c.kind}${replica} rank ${c.rank ?? '-'} step ${steps}`;
}

describe('run layouts as the producers write them today', () => {
  it('verl profiler: <save_path>/step<N>/torch_memory_rank<R>_pid<P>.pickle', () => {
    expect(
      placed(['prof/step3/torch_memory_rank1_pid77.pickle', 'prof/step3/torch_memory_rank0_pid76.pickle']),
    ).toEqual(['verl step rank 0 step 3', 'verl step rank 1 step 3']);
    // Started with no profile_step: the sampler's time-stamped folder, a rank and no step.
    expect(discoverRun(['prof/20261128-0605/torch_memory_rank2_pid9.pickle']).cells[0]).toMatchObject({
      kind: 'other',
      rank: 2,
      pid: 9,
      stamp: '20261128-0605',
      steps: null,
    });
  });

  it("verl trainer: post_update_step<N>_rank<R>_pid<P>.pickle, written before step N runs, precedes step N's dump", () => {
    // volcengine/verl b178a3c verl/trainer/ppo/ray_trainer.py:1700-1707: `global_steps += 1` ends step
    // N-1, then dump_memory_snapshot(tag=f"post_update_step{global_steps}", sub_dir=f"step{global_steps}");
    // the profiler's step<N>/torch_memory dump is written when step N stops (profile.py stop()).
    const run = discoverRun([
      'prof/step4/torch_memory_rank0_pid76.pickle',
      'prof/step4/post_update_step4_rank0_pid76.pickle',
      'prof/step3/torch_memory_rank0_pid76.pickle',
    ]);
    expect(run.cells.map(brief)).toEqual([
      'verl step rank 0 step 3',
      'verl post-update rank 0 step 4',
      'verl step rank 0 step 4',
    ]);
    expect(run.cells[1]!.tag).toBe('post_update_step4');
  });

  it("verl: a tag no verl caller passes is not verl's; the names rule keeps its step", () => {
    // Only "torch_memory", f"post_update_step{N}" and "manual" are passed (b178a3c).
    expect(discoverRun(['dumps/iter7_rank1_pid9.pickle']).cells[0]).toMatchObject({
      layout: 'names',
      kind: 'step',
      rank: 1,
      steps: { first: 7, last: 7 },
    });
  });

  it('verl manual dump: <YYYYmmdd-HHMM>/manual_rank<R>_pid<P>.pickle, a rank and no step', () => {
    const c = discoverRun(['mem_snapshots/20261128-0610/manual_rank3_pid12.pickle']).cells[0]!;
    expect(brief(c)).toBe('verl manual rank 3 step -');
    expect(c.stamp).toBe('20261128-0610');
  });

  it('torchtitan today: profiling/memory_snapshot/step_<N:012d>/<R:06d>_step_<N>.pickle, OOM in _exit', () => {
    expect(
      placed([
        'out/profiling/memory_snapshot/step_000000000020_exit/000001_step_20.pickle',
        'out/profiling/memory_snapshot/step_000000000010/000001_step_10.pickle',
        'out/profiling/memory_snapshot/step_000000000010/000000_step_10.pickle',
        'out/profiling/memory_snapshot/step_000000000020/000012_step_20.pickle.gz',
      ]),
    ).toEqual([
      'torchtitan step rank 0 step 10',
      'torchtitan step rank 1 step 10',
      'torchtitan step rank 12 step 20',
      'torchtitan oom rank 1 step 20',
    ]);
  });

  it('torchtitan until mid-2026: iteration_<N>[_exit]/rank<R>_memory_snapshot.pickle', () => {
    expect(
      placed([
        'memory_snapshot/iteration_20_exit/rank0_memory_snapshot.pickle',
        'memory_snapshot/iteration_10/rank0_memory_snapshot.pickle',
      ]),
    ).toEqual(['torchtitan step rank 0 step 10', 'torchtitan oom rank 0 step 20']);
  });

  it('torchtitan torchft: replica_<k>/ below the step folder; two replicas are two cells', () => {
    const run = discoverRun([
      'ms/step_000000000005/replica_1/000000_step_5.pickle',
      'ms/step_000000000005/replica_0/000000_step_5.pickle',
      'ms/step_000000000005/replica_0/000001_step_5.pickle',
      'ms/iteration_5/replica_1/rank0_memory_snapshot.pickle',
    ]);
    expect(run.cells.map(brief)).toEqual([
      'torchtitan step replica 0 rank 0 step 5',
      'torchtitan step replica 0 rank 1 step 5',
      'torchtitan step replica 1 rank 0 step 5',
      'torchtitan step replica 1 rank 0 step 5',
    ]);
  });

  it('composer: rank<R>.<batch>.memory_snapshot.pickle and the OOMObserver rank<R>_oom_snapshot.pickle', () => {
    expect(
      placed([
        'run/torch_traces/rank1_oom_snapshot.pickle',
        'run/torch_traces/rank1.42.memory_snapshot.pickle',
      ]),
    ).toEqual(['composer step rank 1 step 42', 'composer oom rank 1 step -']);
  });

  it('lmms-engine: snapshot_<reason>_rank<R>.pickle and snapshot_oom_observer_rank<R>_pid<P>_<ts>.pickle', () => {
    const run = discoverRun([
      'out/memory_snapshot/snapshot_oom_observer_rank2_pid301_1764300000.pickle',
      'out/memory_snapshot/snapshot_stop_step_rank0.pickle',
      'out/memory_snapshot/snapshot_train_end_rank1.pickle',
      'out/memory_snapshot/snapshot_manual_rank3.pickle',
      'out/memory_snapshot/snapshot_rl_train_end_rank4.pickle',
    ]);
    expect(run.cells.map((c) => `${brief(c)} ${c.tag}`)).toEqual([
      'lmms-engine manual rank 3 step - manual',
      'lmms-engine end rank 4 step - rl_train_end',
      'lmms-engine end rank 0 step - stop_step',
      'lmms-engine end rank 1 step - train_end',
      'lmms-engine oom rank 2 step - oom_observer',
    ]);
    expect(run.cells[4]).toMatchObject({ pid: 301, stamp: '1764300000' });
    expect(run.unplaced).toEqual([]);
  });

  it("lmms-engine: the trainers' OOM dump snapshot_oom_step<N>_rank<R>_pid<P>_<ts> is an OOM at step N", () => {
    // fsdp2_trainer.py and train/rl/runner.py (5ec1342): dump_on_exception(f"oom_step{global_step}").
    expect(
      discoverRun(['ms/snapshot_oom_step12_rank1_pid7_1764300000.pickle']).cells.map(
        (c) => `${brief(c)} ${c.tag}`,
      ),
    ).toEqual(['lmms-engine oom rank 1 step 12 oom_step12']);
  });

  it('lmms-engine: a reason its code never passes is not claimed; the names rule places the file', () => {
    expect(
      placed(['mine/snapshot_step_40_rank0.pickle', 'mine/snapshot_checkpoint_rank1_pid5_1764300000.pickle']),
    ).toEqual(['names step rank 0 step 40', 'names other rank 1 step -']);
  });

  it('Megatron-Bridge: <stem>_<R>.pickle at profile_step_end, <stem>_oom_rank-<R>.pickle on OOM', () => {
    expect(
      placed([
        'nemo_run/snapshot_oom_rank-1.pickle',
        'nemo_run/snapshot_0.pickle',
        'nemo_run/snapshot_1.pickle',
        'other/memory_trace_0.pickle',
      ]),
    ).toEqual([
      'megatron-bridge end rank 0 step -',
      'megatron-bridge end rank 0 step -',
      'megatron-bridge end rank 1 step -',
      'megatron-bridge oom rank 1 step -',
    ]);
  });

  it('Megatron-Bridge: <stem>_<N> numbers that are not ranks 0..n-1 are not read as ranks', () => {
    // train_utils.py (067f987) line 754-755 writes one file per rank of profile_ranks (default [0]).
    // A hand-written step dump looks the same: a lone snapshot_10, or 10, 20, 30, is not ranks.
    expect(placed(['dumps/snapshot_10.pickle'])).toEqual(['names other rank - step -']);
    expect(discoverRun(['dumps/snapshot_10.pickle']).unplaced).toEqual(['dumps/snapshot_10.pickle']);
    expect(
      placed(['d/memory_snapshot_10.pickle', 'd/memory_snapshot_20.pickle', 'd/memory_snapshot_30.pickle']),
    ).toEqual(['names other rank - step -', 'names other rank - step -', 'names other rank - step -']);
    // Rank and step folders say what the number is not.
    expect(placed(['run/rank0/step_10/snapshot_0.pickle', 'run/rank1/step_10/snapshot_1.pickle'])).toEqual([
      'names step rank 0 step 10',
      'names step rank 1 step 10',
    ]);
    // No version writes `_rank-<R>` for the end dump: such a file is placed by its names.
    expect(placed(['other/memory_snapshot_rank-2.pickle'])).toEqual(['names other rank 2 step -']);
  });

  it('torch_npu: oom_snapshot_<pid>_<%Y%m%d%H%M%S>.pickle is an OOM dump, its rank from a folder that names one', () => {
    // Ascend/pytorch 9e73e70 torch_npu/csrc/core/npu/register/OptionsManager.cpp:646.
    expect(discoverRun(['oom/oom_snapshot_4242_20261128061500.pickle']).cells[0]).toMatchObject({
      layout: 'torch_npu',
      kind: 'oom',
      rank: null,
      pid: 4242,
      stamp: '20261128061500',
    });
    expect(discoverRun(['oom/rank_3/oom_snapshot_4242_20261128061500.pickle']).cells[0]!.rank).toBe(3);
    // Not its stamp (epoch seconds): not torch_npu's name.
    expect(discoverRun(['oom/oom_snapshot_4242_1764300000.pickle']).cells[0]!.layout).toBe('names');
  });

  it('memlens record: step<N>/, <name>_step<N>[_k]/ named and exit dumps, oom_<stamp>/', () => {
    const run = discoverRun([
      'rec/exit_step6/torch_memory_rank0_pid5.pickle',
      'rec/ckpt_step3_2/torch_memory_rank0_pid5.pickle',
      'rec/step3/torch_memory_rank0_pid5.pickle',
      'rec/oom_20261128-061500-000001/torch_memory_oom_rank0_pid5.pickle',
    ]);
    expect(run.cells.map(brief)).toEqual([
      'verl step rank 0 step 3',
      'memlens-record manual rank 0 step 3',
      'memlens-record exit rank 0 step 6',
      'memlens-record oom rank 0 step -',
    ]);
    expect(run.cells[1]!.tag).toBe('ckpt');
  });
});
