/**
 * verl's `profile_continuous_steps`, read from the decoded files. volcengine/verl (b178a3c)
 * verl/trainer/ppo/ray_trainer.py: with it, `_start_profiling` runs only at the first of consecutive
 * profiled steps (lines 1366-1369, `not prev_step_profile and curr_step_profile`) and
 * `_stop_profiling` only at the last (lines 1663-1667, `curr_step_profile and not next_step_profile`);
 * TorchMemoryProfiler.start keeps `sub_dir = f"step{profile_step}"` of the first
 * (verl/utils/profiler/profile.py:249) and stop dumps into it (profile.py:262). So `step3/`'s
 * torch_memory dump may be written when step 5 ends, after the post-update dumps `step4/` and
 * `step5/` hold (ray_trainer.py:1700-1708, written after `global_steps += 1` ends the step before).
 * The folders are the same whether steps 4 and 5 were profiled this way or not profiled at all, so
 * the names cannot tell where the window ends. One process's trace times can: post N is written
 * when step N-1 ends, so the window ends at the last step N whose post dump of the same process
 * (rank and pid) was written before it, by the last trace entry's time.
 */
import type { RunCell } from '../../run-layout/discover.js';
import type { RunSnapshot } from './run-table.js';
import type { Reread } from './settle-layout.js';

export function rereadVerl(snapshots: RunSnapshot[]): Reread {
  const out: Reread = { cells: new Map(), doubts: [] };
  const posts = snapshots.filter((s) => s.cell.layout === 'verl' && s.cell.kind === 'post-update');
  const windows = snapshots.filter((s) => isOneStepWindow(s.cell));
  if (posts.length === 0) return out;
  const postsOf = new Map<string, Timed[]>();
  for (const p of posts) {
    const own = postsOf.get(processOf(p.cell)) ?? [];
    own.push({ step: p.cell.steps!.first, time: dumpTime(p) });
    postsOf.set(processOf(p.cell), own);
  }
  const ends = new Map(windows.map((w) => [w.cell.path, lastStep(w, postsOf.get(processOf(w.cell)) ?? [])]));
  // One `_stop_profiling` call stops every worker group (ray_trainer.py:1065-1075) and each writes
  // into the sub_dir of the same start (profile.py:249): the windows of one folder end together,
  // so those whose process tells nothing (no times, no post-update dumps) end where the others do.
  const folderEnd = new Map<string, number>();
  for (const w of windows) {
    const end = ends.get(w.cell.path);
    const folder = dirOf(w.cell.path);
    if (end !== undefined) folderEnd.set(folder, Math.max(end, folderEnd.get(folder) ?? end));
  }
  const postSteps = new Set(posts.map((p) => p.cell.steps!.first));
  const windowSteps = new Set(windows.map((w) => w.cell.steps!.first));
  // A continuous run could have carried the window past its step where the run went on (a post
  // N+1 was written) and step N+1 has no window of its own (a continuous run writes none there).
  const mayContinue = (first: number) => postSteps.has(first + 1) && !windowSteps.has(first + 1);
  const unsure = new Set<string>();
  for (const w of windows) {
    const c = w.cell;
    const first = c.steps!.first;
    const last = ends.get(c.path) ?? folderEnd.get(dirOf(c.path));
    if (last !== undefined && last > first) out.cells.set(c.path, { ...c, steps: { first, last } });
    else if (last === undefined && mayContinue(first)) unsure.add(folderOf(c.path));
  }
  if (unsure.size > 0) out.doubts.push(doubt([...unsure]));
  return out;
}

/** A post-update dump's step and when it was written (dumpTime). */
interface Timed {
  step: number;
  time: number | null;
}

/**
 * The window's last step by its process's times: the last N whose post N (`own`: its process's) was
 * written strictly before it; undefined where the times cannot tell (none, or no post N+1 of it).
 */
function lastStep(w: RunSnapshot, own: Timed[]): number | undefined {
  const first = w.cell.steps!.first;
  const t = dumpTime(w);
  const next = own.find((p) => p.step === first + 1);
  if (next === undefined || next.time === null || t === null) return undefined;
  let last = first;
  for (const p of own) if (p.step > last && p.time !== null && p.time < t) last = p.step;
  return last;
}

/**
 * A process of the run: its pid with its rank (verl names both: `<tag>_rank<R>_pid<P>.pickle`), since
 * pids are per host and ranks on other nodes or containers often share one.
 */
function processOf(c: RunCell): string {
  return `${c.replica}|${c.rank}|${c.pid}`;
}

function isOneStepWindow(c: RunCell): boolean {
  return c.layout === 'verl' && c.kind === 'step' && c.steps !== null && c.steps.first === c.steps.last;
}

/** When the dump was written, at the latest: the last time its trace records on any device. */
function dumpTime(s: RunSnapshot): number | null {
  const times = (s.result?.devices ?? []).flatMap((d) =>
    d.trace_last_time_us === null ? [] : [d.trace_last_time_us],
  );
  return times.length === 0 ? null : Math.max(...times);
}

/** The folder holding the file, as given. */
function dirOf(path: string): string {
  return path.replace(/[\\/][^\\/]*$/, '');
}

/** The folder's own name: `step3`. */
function folderOf(path: string): string {
  return path.split(/[\\/]/).at(-2) ?? path;
}

function doubt(folders: string[]): string {
  return (
    `not certain: verl's ${folders.map((f) => `${f}/`).join(', ')} dump${folders.length === 1 ? ' is' : 's are'} ` +
    'placed at the end of that step, but with profile_continuous_steps it is written when the last of the ' +
    'consecutive profiled steps ends, after their post-update dumps, and the folders are the same. What would ' +
    'settle it: trace times (PyTorch 2.2+) in the window and the post-update dumps of its process'
  );
}
