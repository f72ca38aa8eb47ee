import type { Run, RunCell } from './discover.js';

/** The cell picked, and a note saying which replica it is when the choice was memlens's own. */
export interface PickedCell {
  cell: RunCell;
  note: string | null;
}

/**
 * The step window of `rank` that holds `step` (regular window dumps only), or why there is none,
 * in words that list what the run does have. With torchft a rank has one window per replica group:
 * `replica` picks one; without it the lowest replica is taken and the note says so.
 */
export function pickCell(
  run: Run,
  rank: number,
  step: number,
  replica: number | null = null,
): PickedCell | { error: string } {
  const windows = run.cells.filter((c) => c.kind === 'step' && c.steps !== null);
  const ofRank = windows.filter((c) => c.rank === rank);
  const mine = replica === null ? ofRank : ofRank.filter((c) => c.replica === replica);
  const found = mine
    .filter((c) => c.steps!.first <= step && step <= c.steps!.last)
    .sort((a, b) => (a.replica ?? -1) - (b.replica ?? -1));
  if (found.length > 0) return { cell: found[0]!, note: replicaNote(found, rank, step) };
  if (ofRank.length === 0) {
    const ranks = [...new Set(windows.map((c) => c.rank))].filter((r) => r !== null);
    return {
      error: `has no step windows of rank ${rank} (ranks: ${ranks.sort((a, b) => a - b).join(', ') || 'none'})`,
    };
  }
  if (mine.length === 0)
    return {
      error: `has no replica ${replica} of rank ${rank} (replicas: ${replicasOf(ofRank).join(', ')})`,
    };
  const held = mine.map((c) =>
    c.steps!.first === c.steps!.last ? `${c.steps!.first}` : `${c.steps!.first}-${c.steps!.last}`,
  );
  return { error: `has no window of rank ${rank} holding step ${step} (its windows: ${held.join(', ')})` };
}

function replicasOf(cells: RunCell[]): (number | null)[] {
  return [...new Set(cells.map((c) => c.replica))].sort((a, b) => (a ?? -1) - (b ?? -1));
}

function replicaNote(found: RunCell[], rank: number, step: number): string | null {
  const replicas = replicasOf(found);
  if (replicas.length < 2) return null;
  return `rank ${rank} at step ${step} has replicas ${replicas.join(', ')}: replica ${found[0]!.replica} is compared (give --replica K for another)`;
}
