import type { CycleGraph, CycleReport } from '../engine/analyses/cycles/index.js';
export type ServedCycle =
  | {
      /** The cycle file, relative to its run directory's parent (as the file list names snapshots). */
      name: string;
      graph: CycleGraph;
      report: CycleReport;
      /** The served snapshot that is its window (its name in api/files), null when none. */
      snapshot: string | null;
    }
  | { name: string; error: string };
