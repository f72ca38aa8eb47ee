import type { Run, RunCell } from './discover.js';

/**
 * The step window of `rank` that holds `step` (regular window dumps only), or why there is none,
 * in words that list what the run does have.
 */
export function pickCell(run: Run, rank: number, step: number): RunCell | { error: string } {
  const mine = run.cells.filter((c) => c.kind === 'step' && c.steps !== null && c.rank === rank);
  const found = mine.find((c) => c.steps!.first <= step && step <= c.steps!.last);
  if (found) return found;
  if (mine.length === 0) {
    const ranks = [...new Set(run.cells.filter((c) => c.kind === 'step').map((c) => c.rank))].filter(
      (r) => r !== null,
    );
    return {
      error: `has no step windows of rank ${rank} (ranks: ${ranks.sort((a, b) => a - b).join(', ') || 'none'})`,
    };
  }
  const windows = mine.map((c) =>
    c.steps!.first === c.steps!.last ? `${c.steps!.first}` : `${c.steps!.first}-${c.steps!.last}`,
  );
  return { error: `has no window of rank ${rank} holding step ${step} (its windows: ${windows.join(', ')})` };
}
