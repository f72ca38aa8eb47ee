import { formatCount } from '../../base/format.js';
import type { LeakGroup } from './leaks.js';

/**
 * A leak site's row in words, shared by the CLI's table and the web panel so both say the
 * same: a leak; held since one iteration (parameters, optimizer state); or held a while, then freed.
 */
export function leakKind(g: LeakGroup): 'leak' | 'once' | 'freed later' {
  if (g.accumulating) return 'leak';
  return g.held_count === g.count && g.iterations.length <= 1 ? 'once' : 'freed later';
}

/** Which iterations the held allocations came from; freed later when none are held. */
export function leakIterationsSpan(g: LeakGroup): string {
  const its = g.iterations;
  if (its.length === 0) return `${formatCount(g.count)} freed later`;
  const span =
    its.length === 1 ? `${g.first_iteration}` : `${g.first_iteration}–${g.last_iteration} (${its.length})`;
  return g.held_count < g.count ? `${span}; ${formatCount(g.count - g.held_count)} freed later` : span;
}
