/**
 * Figures the record cannot show, and why. Peaks, OOM entries, leaks and growth are read from the
 * allocation history: a snapshot without one (history not recorded, or a ring buffer that kept no
 * entry) has only the dump's figures and none of the events, whatever happened, and leaks or growth need iterations (or a run's step
 * windows) to compare. A count found is real; a count of none, or under a limit, is then no verdict.
 */
import { formatCount, plural } from '../../base/format.js';
import { type DeviceLeaks, MIN_ITERATIONS } from '../leaks/leaks.js';
import { growthCanShow } from '../run/growth.js';
import type { CheckSubject } from './check-subject.js';

const NOT_RECORDED = 'allocation history not recorded, or the ring buffer kept no entry';

/**
 * Why a figure read from the history is no verdict: a snapshot has none (null: every one has).
 * No OOM entry then proves none happened, and its peaks are the dump's figures, which the peak
 * may have passed.
 */
export function historyUnseen(subject: CheckSubject): string | null {
  const blind = subject.report.snapshots
    .filter((s) => !s.devices.some((d) => traced(subject, s.file, d.device)))
    .map((s) => s.file);
  if (blind.length === 0) return null;
  if (subject.kind === 'file') return `the file has no trace history (${NOT_RECORDED})`;
  const n = subject.report.snapshots.length;
  const more = blind.length > 1 ? ` and ${formatCount(blind.length - 1)} more` : '';
  return `${formatCount(blind.length)} of ${plural(n, 'snapshot')} ${blind.length === 1 ? 'has' : 'have'} no trace history (${NOT_RECORDED}): ${blind[0]}${more}`;
}

/** Why no leaking site proves none: no device of the file has history and iterations enough to see one. */
export function leaksUnseen(subject: CheckSubject): string | null {
  if (subject.leaks === null) return runWindowsUnseen(subject);
  const traced = tracedLeaks(subject, subject.leaks);
  if (traced.length === 0) return `the file has no trace history (${NOT_RECORDED})`;
  const most = Math.max(...traced.map((l) => l.iterations.count));
  if (most > MIN_ITERATIONS) return null;
  return most === 0
    ? 'no iteration found in the trace (a leak is a site whose allocations outlive their step)'
    : `only ${plural(most, 'iteration')} in the trace, too few to see anything accumulate`;
}

/** Why no growth proves none: no device of the file has history and two whole iterations to fit it over. */
export function growthUnseen(subject: CheckSubject): string | null {
  if (subject.leaks === null) return runWindowsUnseen(subject);
  const traced = tracedLeaks(subject, subject.leaks);
  if (traced.length === 0) return `the file has no trace history (${NOT_RECORDED})`;
  if (traced.some((l) => l.allocated_growth_bytes_per_iteration !== null)) return null;
  return 'fewer than 2 whole iterations in the trace to fit the growth per iteration over';
}

function runWindowsUnseen(subject: CheckSubject): string | null {
  return growthCanShow(subject.report.rows) ? null : 'no rank has 3 step windows to compare';
}

/** A file's devices whose trace has history (the others cannot say anything). */
function tracedLeaks(subject: CheckSubject, leaks: DeviceLeaks[]): DeviceLeaks[] {
  const file = subject.report.snapshots[0]?.file;
  return file === undefined ? [] : leaks.filter((l) => traced(subject, file, l.device));
}

/** Whether a file's device has history, by the engine's rule (hasHistory), which its cell carries. */
function traced(subject: CheckSubject, file: string, device: number): boolean {
  return subject.results.get(file)?.history.includes(device) ?? false;
}
