/**
 * The run at a glance: its snapshots with their figures, the cells that stand out, the sites that
 * grow, and each OOM dump placed after the window it follows.
 */
import type { LayoutName, Run, RunCell } from '../../run/discover.js';
import type { OomReport } from '../oom/oom.js';
import type { DeviceSummary } from '../summary/summary.js';
import type { CellResult } from './cell-result.js';
import { type GrowingSite, runGrowth } from './growth.js';
import { type Outlier, runOutliers } from './outliers.js';
import { type RunRow, type RunSnapshot, runRows } from './run-table.js';

export interface RunSnapshotReport {
  file: string;
  step: number | null;
  last_step: number | null;
  rank: number | null;
  pid: number | null;
  kind: RunCell['kind'];
  /** The same device objects as `summary --json` of the file alone (the devices the rank used). */
  devices: DeviceSummary[];
  error?: string;
}

export interface RunOom {
  file: string;
  rank: number | null;
  /** An OOM dump: the last step of the last window before it in run order (null: none before). */
  after_step: number | null;
  /** An OOM entry inside a step window's own trace: that window's first step. */
  in_step: number | null;
  devices: { device: number; reports: OomReport[] }[];
}

export interface RunReport {
  root: string;
  layout: LayoutName | 'mixed';
  snapshots: RunSnapshotReport[];
  /** Files whose names carry neither a rank nor a step. */
  unplaced: string[];
  rows: RunRow[];
  outliers: Outlier[];
  growth: GrowingSite[];
  ooms: RunOom[];
}

export function runReport(root: string, run: Run, snapshots: RunSnapshot[]): RunReport {
  const results = new Map<string, CellResult>();
  for (const s of snapshots) if (s.result !== null) results.set(s.cell.path, s.result);
  const rows = runRows(snapshots);
  return {
    root,
    layout: run.layout,
    snapshots: snapshots.map(snapshotReport),
    unplaced: run.unplaced,
    rows,
    outliers: runOutliers(rows, results),
    growth: runGrowth(rows, results),
    ooms: runOoms(snapshots),
  };
}

function snapshotReport({ cell, result, error }: RunSnapshot): RunSnapshotReport {
  return {
    file: cell.path,
    step: cell.steps?.first ?? null,
    last_step: cell.steps?.last ?? null,
    rank: cell.rank,
    pid: cell.pid,
    kind: cell.kind,
    devices: result?.devices ?? [],
    ...(error !== undefined ? { error } : {}),
  };
}

/** OOM dumps and OOM entries anywhere in the run, each after the last window before it in run order. */
function runOoms(snapshots: RunSnapshot[]): RunOom[] {
  const out: RunOom[] = [];
  let lastWindow: number | null = null;
  for (const { cell, result } of snapshots) {
    const devices = result?.ooms ?? [];
    const dump = cell.kind === 'oom';
    if (dump || devices.length > 0)
      out.push({
        file: cell.path,
        rank: cell.rank,
        after_step: dump ? lastWindow : null,
        in_step: dump ? null : (cell.steps?.first ?? null),
        devices,
      });
    if (cell.kind === 'step' && cell.steps) lastWindow = cell.steps.last;
  }
  return out;
}
