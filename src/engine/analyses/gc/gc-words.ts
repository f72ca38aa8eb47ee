import { formatCount, formatDuration } from '../../format.js';
import type { GcBurst } from './gc-bursts.js';

/** How long a burst's allocations had lived, in the words the CLI and the web panel share. */
export function burstLivedText(b: GcBurst): string {
  const lived = [
    b.lived_iterations
      ? `${b.lived_iterations.min}–${b.lived_iterations.max} iterations (median ${b.lived_iterations.median})`
      : null,
    b.lived_us ? `${formatDuration(b.lived_us.min)}–${formatDuration(b.lived_us.max)}` : null,
    b.born_before_window > 0
      ? `${formatCount(b.born_before_window)} allocated before the recorded window`
      : null,
  ].filter((x) => x !== null);
  return lived.join('; ') || 'unknown';
}
