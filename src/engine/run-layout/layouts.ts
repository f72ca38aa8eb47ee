/**
 * Where each producer puts its snapshot files, rule by rule, each read from the producer's own
 * source (cited beside it, and in docs/producers.md with the versions read). A rule sees the file
 * name (a trailing .gz removed) and the directory names above it, and places the file or declines.
 */

export type CellKind = 'step' | 'post-update' | 'manual' | 'end' | 'exit' | 'oom' | 'other';

export type LayoutName =
  | 'verl'
  | 'memlens-record'
  | 'torchtitan'
  | 'composer'
  | 'lmms-engine'
  | 'megatron-bridge'
  | 'torch_npu'
  | 'names';

export interface StepWindow {
  first: number;
  last: number;
}

export interface Placement {
  rank: number | null;
  pid: number | null;
  /**
   * The steps the names give: a periodic dump's window (kind 'step'), or the step at which a dump
   * of another kind was written (a post-update dump, an OOM exit dump, a named dump).
   */
  steps: StepWindow | null;
  kind: CellKind;
  /** The layout whose rule placed the file. */
  layout: LayoutName;
  /** A dump's own time stamp as its names give it (a directory or a file name part). */
  stamp: string | null;
  /** torchft's replica group: part of the cell, since its ranks are numbered within the replica. */
  replica: number | null;
  /** The producer's own tag for a dump that is not a periodic one (train_end, post_update, a dump name). */
  tag: string | null;
}

export type Rule = (file: string, dirs: string[]) => Placement | null;

const num = (s: string | undefined): number | null => (s === undefined ? null : Number(s));

export function placement(
  layout: LayoutName,
  kind: CellKind,
  rank: number | null,
  steps: StepWindow | null,
  more: Partial<Placement> = {},
): Placement {
  return { layout, kind, rank, pid: null, steps, stamp: null, replica: null, tag: null, ...more };
}

export function stepWindow(first: string | undefined, last?: string): StepWindow | null {
  if (first === undefined) return null;
  return { first: Number(first), last: Number(last ?? first) };
}

/**
 * verl, volcengine/verl verl/utils/memory_utils.py MemorySnapshotSampler.dump_memory_snapshot:
 * `<out_dir>/<sub_dir or strftime("%Y%m%d-%H%M")>/f"{tag}_rank{rank}_pid{pid}.pickle"`. Its callers:
 * - verl/utils/profiler/profile.py TorchMemoryProfiler: tag "torch_memory", sub_dir f"step{profile_step}"
 *   (no step given: the time-stamped folder);
 * - verl/trainer/ppo/ray_trainer.py fit() (b178a3c, lines 1700-1707): tag f"post_update_step{global_steps}",
 *   sub_dir f"step{global_steps}", written after `self.global_steps += 1` at the end of step N-1, so
 *   before step N runs; the profiler's dump in the same step<N>/ folder is written at step N's end
 *   (`_stop_profiling` -> TorchMemoryProfiler.stop), so the post-update dump comes first. With
 *   profile_continuous_steps the step<N>/ window may end at a later step, which the names cannot
 *   tell: the decoded files can (analyses/run/verl-continuous.ts);
 * - verl/workers/fsdp_workers.py (and megatron_workers.py) dump_memory_snapshot: tag "manual", no
 *   sub_dir, so `<save_path or .>/<YYYYmmdd-HHMM>/manual_rank<R>_pid<P>.pickle`.
 * No other caller passes a tag (b178a3c, `git grep "dump_memory_snapshot("`): a file with another tag
 * is not verl's, and is left to the rules after this one (the names rule finds its step).
 * memlens record writes the same names (python/memlens/_record.py): `oom_<stamp>/` holding
 * torch_memory_oom_rank<R>_pid<P>.pickle, and `<name>_step<N>[_<k>]/` for memlens.dump(name),
 * SIGUSR1 and exit; `steps<A>-<B>/` is a window of several steps.
 */
const VERL_FILE = /^(.+)_rank(\d+)_pid(\d+)\.pickle$/;
const VERL_STEP_DIR = /^steps?(\d+)(?:-(\d+))?$/;
const VERL_STAMP_DIR = /^\d{8}-\d{4}$/;
const RECORD_OOM_DIR = /^oom_(.+)$/;
const RECORD_NAMED_DIR = /^(.+?)_step(\d+)(?:_\d+)?$/;

export const verl: Rule = (file, dirs) => {
  const m = VERL_FILE.exec(file);
  if (m === null) return null;
  const [, tag, rank, pid] = m;
  const dir = dirs.at(-1) ?? '';
  const more = { pid: num(pid) };
  const step = VERL_STEP_DIR.exec(dir);
  const steps = step ? stepWindow(step[1], step[2]) : null;
  const post = /^post_update_step(\d+)$/.exec(tag!);
  if (post)
    return placement('verl', 'post-update', num(rank), steps ?? stepWindow(post[1]), { ...more, tag: tag! });
  if (tag === 'manual')
    return placement('verl', 'manual', num(rank), steps, { ...more, tag, stamp: stampOf(dir) });
  if (tag === 'torch_memory_oom') {
    const oom = RECORD_OOM_DIR.exec(dir);
    return placement('memlens-record', 'oom', num(rank), null, { ...more, stamp: oom ? oom[1]! : null });
  }
  if (tag !== 'torch_memory') return null;
  if (steps) return placement('verl', 'step', num(rank), steps, more);
  const named = RECORD_NAMED_DIR.exec(dir);
  if (named) {
    const kind = named[1] === 'exit' ? 'exit' : 'manual';
    return placement('memlens-record', kind, num(rank), stepWindow(named[2]), { ...more, tag: named[1]! });
  }
  return placement('verl', 'other', num(rank), null, { ...more, stamp: stampOf(dir) });
};

function stampOf(dir: string): string | null {
  return VERL_STAMP_DIR.test(dir) ? dir : null;
}

/**
 * torchtitan, pytorch/torchtitan torchtitan/tools/profiler.py: MEMORY_DIR "profiling/memory_snapshot",
 * MEMORY_STEP_DIR "step_{step:012d}", MEMORY_EXIT_DIR "step_{step:012d}_exit" (MemoryProfiler.step
 * with exit_ctx, only on torch.OutOfMemoryError, at step_num - 1), MEMORY_FILE
 * "{rank:06d}_step_{step}.pickle", the file in `os.path.join(snapshot_dir, dir_name, leaf_folder)`.
 * Until May 2026 (commit b2cd149f6) the same code wrote `iteration_{step}[_exit]/` and
 * `rank{rank}_memory_snapshot.pickle`. torchtitan/experiments/torchft/trainer.py passes leaf_folder
 * f"replica_{replica_id}" (see `replica` below); the rank is torch.distributed.get_rank() of the
 * replica's own process group.
 */
const TITAN_DIR = /^step_(\d+)(_exit)?$/;
const TITAN_FILE = /^(\d+)_step_(\d+)\.pickle$/;
const TITAN_OLD_DIR = /^iteration_(\d+)(_exit)?$/;
const TITAN_OLD_FILE = /^rank(\d+)_memory_snapshot\.pickle$/;

export const torchtitan: Rule = (file, dirs) => {
  const up = REPLICA_DIR.test(dirs.at(-1) ?? '') ? dirs.at(-2) : dirs.at(-1);
  const now = TITAN_FILE.exec(file);
  const dir = (now ? TITAN_DIR : TITAN_OLD_DIR).exec(up ?? '');
  const rank = now ? now[1] : TITAN_OLD_FILE.exec(file)?.[1];
  if (dir === null || rank === undefined) return null;
  return placement('torchtitan', dir[2] ? 'oom' : 'step', num(rank), stepWindow(dir[1]));
};

/**
 * composer, mosaicml/composer composer/callbacks/memory_snapshot.py MemorySnapshot: folder
 * '{run_name}/torch_traces', filename 'rank{rank}.{batch}.memory_snapshot' + '.pickle' (and '.html');
 * composer/callbacks/oom_observer.py OOMObserver: filename 'rank{rank}_oom' + '_snapshot.pickle'
 * (beside '_trace_plot.html', '_segment_plot.html', '_segment_flamegraph.svg',
 * '_memory_flamegraph.svg'); composer/profiler/torch_profiler.py writes
 * 'rank{rank}.{batch}.pt.trace.json' in the same folder (not a snapshot: skipped by content).
 */
const COMPOSER_STEP = /^rank(\d+)\.(\d+)\.memory_snapshot\.pickle$/;
const COMPOSER_OOM = /^rank(\d+)_oom_snapshot\.pickle$/;

export const composer: Rule = (file) => {
  const step = COMPOSER_STEP.exec(file);
  if (step) return placement('composer', 'step', num(step[1]), stepWindow(step[2]));
  const oom = COMPOSER_OOM.exec(file);
  return oom && placement('composer', 'oom', num(oom[1]), null);
};

/**
 * lmms-engine, EvolvingLMMs-Lab/lmms-engine src/lmms_engine/utils/profiler.py (8d35af0)
 * MemorySnapshotProfiler: stop_and_save(reason) writes f"snapshot_{reason}_rank{rank}.pickle",
 * dump_on_exception(reason) f"snapshot_{reason}_rank{rank}_pid{pid}_{int(time.time())}.pickle", in
 * os.path.join(output_dir, "memory_snapshot"). The reasons its callers pass, and no others:
 * - stop_and_save: "manual" (its default), "stop_step" (MemorySnapshotProfiler.step at
 *   memory_snapshot_config.stop_step), "train_end" (src/lmms_engine/train/fsdp2/fsdp2_trainer.py after
 *   the loop), "rl_train_end" (src/lmms_engine/train/rl/runner.py at 5ec1342, after the RL loop);
 * - dump_on_exception: "oom_observer" (its own OOM observer), f"oom_step{global_step}" (fsdp2_trainer.py
 *   and rl/runner.py at 5ec1342, on torch.OutOfMemoryError in the training step of global_step).
 * A file with another reason is not lmms-engine's: the rules after this one place it.
 */
const LMMS_EXCEPTION = /^snapshot_(oom_observer|oom_step(\d+))_rank(\d+)_pid(\d+)_(\d+)\.pickle$/;
const LMMS_STOP = /^snapshot_(manual|stop_step|train_end|rl_train_end)_rank(\d+)\.pickle$/;
const LMMS_KINDS: Record<string, CellKind> = {
  stop_step: 'end',
  train_end: 'end',
  rl_train_end: 'end',
  manual: 'manual',
};

export const lmmsEngine: Rule = (file) => {
  const ex = LMMS_EXCEPTION.exec(file);
  if (ex)
    return placement('lmms-engine', 'oom', num(ex[3]), stepWindow(ex[2]), {
      pid: num(ex[4]),
      stamp: ex[5]!,
      tag: ex[1]!,
    });
  const stop = LMMS_STOP.exec(file);
  return stop && placement('lmms-engine', LMMS_KINDS[stop[1]!]!, num(stop[2]), null, { tag: stop[1]! });
};

/**
 * Megatron-Bridge, NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/utils/train_utils.py
 * (067f987): at iteration == profiling.profile_step_end, each rank of profiling.profile_ranks (default
 * [0]) writes f"{filename}_{rank}{ext}" of profiling.memory_snapshot_path (line 754-755;
 * src/megatron/bridge/training/config.py line 748: default "/nemo_run/snapshot.pickle"; its docs use
 * memory_snapshot, memory_trace, memory_profile); its OOM observer writes f"{base}_oom_rank-{rank}{ext}"
 * (line 132-133). Since 65e3e01 (Jan 2026) the name has had the rank; before it, the path itself, by
 * the last rank. No version writes `_rank-<R>` for the end dump (`git log -S`).
 *
 * `<stem>_<N>.pickle` is also what a hand-written step dump looks like (`snapshot_10.pickle`): the
 * name alone cannot tell rank 10 from step 10, so the caller keeps this placement only where the
 * folder's files fit Megatron-Bridge (see megatronRanksFit), and the decoded files may still show
 * them to be one process's steps (analyses/run/megatron-evidence.ts). The OOM form is its own.
 */
const MEGATRON_OOM = /^(.+)_oom_rank-(\d+)\.pickle$/;
const MEGATRON_END = /^(?:.*[_-])?(?:snapshot|trace|profile)_(\d+)\.pickle$/;

export const megatronBridge: Rule = (file) => {
  const oom = MEGATRON_OOM.exec(file);
  if (oom) return placement('megatron-bridge', 'oom', num(oom[2]), null, { tag: oom[1]! });
  const end = MEGATRON_END.exec(file);
  return end && placement('megatron-bridge', 'end', num(end[1]), null);
};

/**
 * Whether the end dumps named `<stem>_<N>` in one folder are Megatron-Bridge's: the ranks of one run
 * write one file each with one stem, so their numbers are ranks, 0 to n-1 with the default and the
 * usual profile_ranks. Any other set of numbers (one file `snapshot_10`, `snapshot_10`, `_20`, `_30`)
 * is more likely steps, and is not read as ranks.
 */
export function megatronRanksFit(numbers: number[]): boolean {
  const ranks = new Set(numbers);
  return [...ranks].every((r) => r < ranks.size);
}

/**
 * torch_npu, Ascend/pytorch torch_npu/csrc/core/npu/register/OptionsManager.cpp (9e73e70, line 646,
 * oom_observer), with OOM_SNAPSHOT_ENABLE set: "oom_snapshot_" << getpid() << "_" <<
 * std::put_time(localtime, "%Y%m%d%H%M%S") << ".pickle", in OOM_SNAPSHOT_PATH (GetOomSnapshotDumpPath,
 * else the working directory). The stamp is the local time, 14 digits.
 */
const NPU_OOM = /^oom_snapshot_(\d+)_(\d{14})\.pickle$/;

export const torchNpu: Rule = (file) => {
  const m = NPU_OOM.exec(file);
  return m && placement('torch_npu', 'oom', null, null, { pid: num(m[1]), stamp: m[2]! });
};

/** torchft's replica leaf folder (see torchtitan above). */
export const REPLICA_DIR = /^replica_(\d+)$/;

export function replicaOf(dirs: string[]): number | null {
  for (const d of [...dirs].reverse()) {
    const m = REPLICA_DIR.exec(d);
    if (m) return Number(m[1]);
  }
  return null;
}
