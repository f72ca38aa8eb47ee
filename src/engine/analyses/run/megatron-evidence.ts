/**
 * Whether Megatron-Bridge's `<stem>_<N>.pickle` end dumps are ranks, read from the decoded files.
 * The names cannot tell: NVIDIA-NeMo/Megatron-Bridge (067f987)
 * src/megatron/bridge/training/utils/train_utils.py:754-755 writes `f"{filename}_{rank}{ext}"`, and a
 * hand-written loop `_dump_snapshot(f"snapshot_{i}.pickle")` writes the same names, one per step.
 * What the producer's code makes reliable:
 * - each rank is its own process, so no two of its files continue one trace ring (trace-head.ts);
 *   since 9e9e58b (Apr 2026) it records the trace from setup (train_utils.py:115-125, called from
 *   training/setup.py:405), but before it dumped with no history recorded: a file with no trace
 *   may still be its;
 * - a rank's device is its local rank (training/initialize.py:716-720, `set_device(get_local_rank_preinit())`),
 *   so files on different devices are different processes; but with `external_gpu_device_mapping`
 *   every rank is on device 0 (initialize.py:717-718), as are ranks on different nodes: one device
 *   for all the files says nothing.
 */
import type { RunCell } from '../../run-layout/discover.js';
import type { RunSnapshot } from './run-table.js';
import type { Reread } from './settle-layout.js';
import { sameProcess } from './trace-head.js';

const END_NUMBER = /_\d+\.pickle(\.gz)?$/i;

export function rereadMegatron(snapshots: RunSnapshot[]): Reread {
  const out: Reread = { cells: new Map(), doubts: [] };
  for (const group of endGroups(snapshots)) {
    const read = group.filter((s) => s.result !== null);
    if (read.length < 2) continue;
    const continued = read.slice(1).map((s, i) => sameProcess(read[i]!.result!.heads, s.result!.heads));
    if (continued.every(Boolean)) {
      for (const s of group) out.cells.set(s.cell.path, inSequence(s.cell));
      continue;
    }
    const devices = new Set(read.map((s) => deviceLabels(s).join(',')));
    if (continued.some(Boolean))
      out.doubts.push(doubt(read, 'some of them continue one trace, others do not'));
    else if (devices.size === 1)
      out.doubts.push(
        doubt(
          read,
          `all are on ${[...devices][0]} and their traces do not show whether they are one process (no trace, no time_us, or the trace wrapped)`,
        ),
      );
  }
  return out;
}

/** Megatron-Bridge end dumps by folder and stem, in rank order. */
function endGroups(snapshots: RunSnapshot[]): RunSnapshot[][] {
  const groups = new Map<string, RunSnapshot[]>();
  for (const s of snapshots) {
    if (s.cell.layout !== 'megatron-bridge' || s.cell.kind !== 'end') continue;
    const key = s.cell.path.replace(END_NUMBER, '');
    const group = groups.get(key) ?? [];
    group.push(s);
    groups.set(key, group);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.cell.rank! - b.cell.rank!));
}

/** One process's dumps in sequence: the number orders them, as a step would. */
function inSequence(c: RunCell): RunCell {
  return { ...c, layout: 'names', kind: 'step', rank: null, steps: { first: c.rank!, last: c.rank! } };
}

function deviceLabels(s: RunSnapshot): string[] {
  return s.result!.devices.map((d) => d.label);
}

function doubt(read: RunSnapshot[], why: string): string {
  const first = read[0]!.cell;
  const last = read.at(-1)!.cell;
  return (
    `not certain: ${first.path} … ${last.path} are read as Megatron-Bridge's ranks ${first.rank}-${last.rank}, ` +
    `but a loop dumping one file per step names them the same; ${why}. What would settle it: ` +
    "traces with times (PyTorch 2.2+) recorded before the first dump, whose first entries one process's " +
    'dumps share and ranks do not, or the files in rank folders (rank0/, rank1/, …)'
  );
}
