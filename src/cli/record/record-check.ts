/**
 * `memlens record --check`: the recorded run held to the repository's budgets once the program has
 * ended. The report goes to stderr (stdout is the program's); the exit code is the check's.
 */
import type { Baseline, Budgets } from '../../engine/analyses/check/index.js';
import { snapshotsUnder } from '../../node/files/expand-paths.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import { loadBaseline } from '../check/check-inputs.js';
import { EXIT_CHECK_FAILED, print, runCheck } from '../commands/check.js';

/**
 * The budgets' baseline, read before the program runs: a missing or unreadable one is said in one
 * line then (undefined: refused), not after a long training job. Null when there is none.
 */
export async function baselineBeforeRecording(budgets: Budgets): Promise<Baseline | null | undefined> {
  if (budgets.baseline === undefined) return null;
  try {
    return await loadBaseline(budgets.baseline, { cache: true, progress: true });
  } catch (e) {
    process.stderr.write(
      `memlens record: --check: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`,
    );
    process.exitCode = EXIT_BAD_INPUT;
    return undefined;
  }
}

export async function checkRecording(
  out: string,
  budgets: Budgets,
  baseline: Baseline | null,
): Promise<number> {
  if (snapshotsUnder(out).length === 0) {
    process.stderr.write('memlens record: --check: no snapshot was recorded, nothing to check\n');
    return EXIT_BAD_INPUT;
  }
  try {
    const result = await runCheck(out, budgets, { cache: true, progress: false }, { baseline });
    print(result, 'text', process.stderr);
    return result.passed ? 0 : EXIT_CHECK_FAILED;
  } catch (e) {
    process.stderr.write(
      `memlens record: --check: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`,
    );
    return EXIT_BAD_INPUT;
  }
}
