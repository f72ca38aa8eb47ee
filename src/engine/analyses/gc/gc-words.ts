import { formatBytes, formatCount, formatDuration, plural, sinceStart } from '../../base/format.js';
import type { BurstPattern } from './burst-patterns.js';
import type { GcBurst } from './gc-bursts.js';
import type { Spread } from './spread.js';

/** How long a burst's allocations had lived, in the words the CLI and the web panel share. */
export function burstLivedText(b: GcBurst): string {
  const lived = [
    b.lived_iterations
      ? `${b.lived_iterations.min}–${b.lived_iterations.max} iterations (median ${b.lived_iterations.median})`
      : null,
    b.lived_us ? `${formatDuration(b.lived_us.min)}–${formatDuration(b.lived_us.max)}` : null,
    bornBefore(b),
  ].filter((x) => x !== null);
  return lived.join('; ') || 'unknown';
}

/** Read after "had lived": all of them, or how many, since before the recorded window. */
function bornBefore(b: GcBurst): string | null {
  const n = b.born_before_window;
  if (n === 0) return null;
  return n >= b.count
    ? 'since before the recorded window'
    : `${formatCount(n)} of them since before the recorded window`;
}

/** When a burst happened: its entry, its time into the trace, its iteration. */
export function burstWhenText(b: GcBurst, start: number | null): string {
  const at = sinceStart(b.time_us, start);
  return [
    `entry ${formatCount(b.entry)}`,
    at !== null ? `${at} into the trace` : null,
    b.iteration_name !== null ? `in ${b.iteration_name}` : null,
  ]
    .filter((x) => x !== null)
    .join(', ');
}

/** "every ~5 iterations (~1.25 s)", or in entries without iterations; "irregularly" when the gaps vary. */
export function patternPeriodText(p: BurstPattern): string {
  const every =
    p.period_iterations !== null
      ? `every ~${plural(p.period_iterations, 'iteration')}`
      : `every ~${plural(p.period_entries ?? 0, 'entry')}`;
  const us = p.period_us !== null ? ` (~${formatDuration(p.period_us)})` : '';
  return `${every}${us}${p.regular ? '' : ', irregularly'}`;
}

/** Where a pattern's bursts lie: entries and times into the trace. */
export function patternSpanText(p: BurstPattern, start: number | null): string {
  const from = sinceStart(p.first_time_us, start);
  const to = sinceStart(p.last_time_us, start);
  const times = from !== null && to !== null ? ` (${from}–${to} into the trace)` : '';
  return `entries ${formatCount(p.first_entry)}–${formatCount(p.last_entry)}${times}`;
}

/** What each burst of a pattern frees: "8 allocations, 28.6 MiB each", or the range when they vary. */
export function patternEachText(p: BurstPattern): string {
  const range = (s: Spread, f: (n: number) => string) =>
    s.min === s.max ? f(s.min) : `${f(s.min)}–${f(s.max)} (median ${f(s.median)})`;
  const allocations =
    p.allocations.min === p.allocations.max
      ? plural(p.allocations.min, 'allocation')
      : `${range(p.allocations, formatCount)} allocations`;
  return `${allocations}, ${range(p.bytes, formatBytes)} each`;
}

/** "6,669 bursts" headline of a pattern. */
export function patternCountText(p: BurstPattern): string {
  return plural(p.count, 'burst');
}
