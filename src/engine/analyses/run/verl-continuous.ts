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
 * (pid) was written before it, by the last trace entry's time.
 */
import type { RunCell } from '../../run-layout/discover.js';
import type { RunSnapshot } from './run-table.js';
import type { Reread } from './settle-layout.js';

export function rereadVerl(snapshots: RunSnapshot[]): Reread {
  const out: Reread = { cells: new Map(), doubts: [] };
  const posts = snapshots.filter((s) => s.cell.layout === 'verl' && s.cell.kind === 'post-update');
  const unsure = new Set<string>();
  for (const w of snapshots) {
    const c = w.cell;
    if (!isOneStepWindow(c)) continue;
    const first = c.steps!.first;
    const mine = posts.filter((p) => p.cell.pid === c.pid && p.cell.steps!.first > first);
    const next = mine.find((p) => p.cell.steps!.first === first + 1);
    // No post-update dump after it from its process: nothing it could be misplaced against.
    if (next === undefined) continue;
    const t = dumpTime(w);
    if (t !== null && dumpTime(next) !== null) {
      const before = mine.filter((p) => (dumpTime(p) ?? Number.POSITIVE_INFINITY) < t);
      const last = Math.max(first, ...before.map((p) => p.cell.steps!.first));
      if (last > first) out.cells.set(c.path, { ...c, steps: { first, last } });
    } else if (
      !snapshots.some(
        (s) => isOneStepWindow(s.cell) && s.cell.rank === c.rank && s.cell.steps!.first === first + 1,
      )
    ) {
      // A window of the next step is no continuous run's: only its first step's folder gets one.
      unsure.add(folderOf(c.path));
    }
  }
  if (unsure.size > 0) out.doubts.push(doubt([...unsure]));
  return out;
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
