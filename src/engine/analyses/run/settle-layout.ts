/**
 * What the decoded files add to the run's layout where the names alone cannot tell: whether
 * Megatron-Bridge's `<stem>_<N>` dumps are ranks (megatron-evidence.ts), and where verl's window
 * ends under profile_continuous_steps (verl-continuous.ts). Cells are placed again and moved to
 * their place in run order; what stays open is said, never guessed.
 */
import type { RunCell } from '../../run-layout/discover.js';
import { rereadMegatron } from './megatron-evidence.js';
import type { RunSnapshot } from './run-table.js';
import { rereadVerl } from './verl-continuous.js';

export interface Reread {
  /** Cells placed again, by path. */
  cells: Map<string, RunCell>;
  /** What the files cannot settle, each a sentence starting "not certain:". */
  doubts: string[];
}

export interface Settled {
  snapshots: RunSnapshot[];
  /** Every cell placed again, by path. */
  cells: Map<string, RunCell>;
  doubts: string[];
}

export function settleLayout(snapshots: RunSnapshot[]): Settled {
  const megatron = rereadMegatron(snapshots);
  // One process's dumps in sequence: the number they carry orders them.
  const sequenced = resort(placed(snapshots, megatron.cells), (c) => megatron.cells.has(c.path), stepOf);
  const verl = rereadVerl(sequenced);
  const settled =
    verl.cells.size === 0
      ? sequenced
      : resort(placed(sequenced, verl.cells), isVerlMoment, (c) => moment(c, verl.cells.has(c.path)));
  return {
    snapshots: settled,
    cells: new Map([...megatron.cells, ...verl.cells]),
    doubts: [...megatron.doubts, ...verl.doubts],
  };
}

function placed(snapshots: RunSnapshot[], cells: Map<string, RunCell>): RunSnapshot[] {
  return cells.size === 0
    ? snapshots
    : snapshots.map((s) => ({ ...s, cell: cells.get(s.cell.path) ?? s.cell }));
}

/** The picked snapshots sorted (stably) by key among the places they hold; the others stay. */
function resort(
  snapshots: RunSnapshot[],
  pick: (c: RunCell) => boolean,
  key: (c: RunCell) => number,
): RunSnapshot[] {
  const at = snapshots.flatMap((s, i) => (pick(s.cell) ? [i] : []));
  if (at.length === 0) return snapshots;
  const sorted = at.map((i) => snapshots[i]!).sort((a, b) => key(a.cell) - key(b.cell));
  const out = [...snapshots];
  at.forEach((i, k) => {
    out[i] = sorted[k]!;
  });
  return out;
}

const stepOf = (c: RunCell): number => c.steps?.first ?? 0;

const isVerlMoment = (c: RunCell): boolean =>
  c.layout === 'verl' && (c.kind === 'step' || c.kind === 'post-update') && c.steps !== null;

/**
 * When in the run a verl dump was written: post N before step N ran, a window when its last step
 * ended. A window read again ends at its last step; the others keep the names' order (by first step).
 */
function moment(c: RunCell, reread: boolean): number {
  if (c.kind === 'post-update') return c.steps!.first - 0.5;
  return reread ? c.steps!.last : c.steps!.first;
}
