/**
 * The run at a glance: its snapshots with their figures, the cells that stand out, the sites that
 * grow, and each OOM dump placed after the window it follows.
 */
import {
  type LayoutName,
  type LeftOut,
  mainLayout,
  type Run,
  type RunCell,
  unplacedOf,
} from '../../run-layout/discover.js';
import type { OomReport } from '../oom/oom.js';
import type { DeviceSummary } from '../summary/summary.js';
import type { CellResult } from './cell-result.js';
import { type GrowingSite, runGrowth } from './growth.js';
import { type Outlier, runOutliers } from './outliers.js';
import { type RunRow, type RunSnapshot, runRows, sharedCells } from './run-table.js';
import { settleLayout } from './settle-layout.js';

export interface RunSnapshotReport {
  file: string;
  step: number | null;
  last_step: number | null;
  rank: number | null;
  pid: number | null;
  /** torchft's replica group (the rank is within it); null elsewhere. */
  replica: number | null;
  kind: RunCell['kind'];
  /** The producer's tag for a dump that is not periodic (post_update_step3, train_end, a dump's name). */
  tag: string | null;
  /** The rule that placed the file (the producer's layout). */
  layout: RunCell['layout'];
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
  /** Other dumps of the same process whose traces hold the same OOM entry (memlens record's exit dump keeps it). */
  also_in: string[];
}

export interface RunReport {
  root: string;
  layout: LayoutName | 'mixed';
  snapshots: RunSnapshotReport[];
  /** Files whose names carry neither a rank nor a step. */
  unplaced: string[];
  /**
   * Where the names and the decoded files cannot settle the layout (ranks or one process's steps,
   * where a window ends), each a sentence starting "not certain:" that says what would settle it.
   */
  layout_doubts: string[];
  /** Files found in the run's directories that are not snapshots, and why. */
  skipped: LeftOut[];
  /** Directories and links of the run that could not be read, and why. */
  not_read: LeftOut[];
  /** Cells (a rank's step, or dump of one kind) holding more than one dump: each is a lane of its own. */
  shared: SharedCell[];
  rows: RunRow[];
  outliers: Outlier[];
  growth: GrowingSite[];
  ooms: RunOom[];
}

export interface SharedCell {
  /** "rank 0, 3": the first dump's lane and the column. */
  where: string;
  files: { file: string; lane: string }[];
}

export function runReport(root: string, run: Run, given: RunSnapshot[]): RunReport {
  const settled = settleLayout(given);
  const snapshots = settled.snapshots;
  const cells = run.cells.map((c) => settled.cells.get(c.path) ?? c);
  const results = new Map<string, CellResult>();
  for (const s of snapshots) if (s.result !== null) results.set(s.cell.path, s.result);
  const rows = runRows(snapshots);
  return {
    root,
    layout: settled.cells.size === 0 ? run.layout : mainLayout(cells),
    snapshots: snapshots.map(snapshotReport),
    unplaced: settled.cells.size === 0 ? run.unplaced : unplacedOf(cells),
    layout_doubts: settled.doubts,
    skipped: run.skipped,
    not_read: run.notRead,
    shared: sharedCells(rows).map(({ column, rows: list }) => {
      const lanes = [...list].sort((a, b) => (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : 0));
      return {
        where: `${lanes[0]!.lane_label}, ${/^\d/.test(column) ? `step ${column}` : column}`,
        files: lanes.map((r) => ({ file: r.file, lane: r.lane_label })),
      };
    }),
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
    replica: cell.replica,
    kind: cell.kind,
    tag: cell.tag,
    layout: cell.layout,
    devices: result?.devices ?? [],
    ...(error !== undefined ? { error } : {}),
  };
}

/** OOM dumps and OOM entries anywhere in the run, each after the last window before it in run order. */
function runOoms(snapshots: RunSnapshot[]): RunOom[] {
  const found: { oom: RunOom; cell: RunCell }[] = [];
  let lastWindow: number | null = null;
  for (const { cell, result } of snapshots) {
    const devices = result?.ooms ?? [];
    const dump = cell.kind === 'oom';
    if (dump || devices.length > 0) {
      const after = dump || followsWindow(cell);
      const oom = {
        file: cell.path,
        rank: cell.rank,
        after_step: after ? lastWindow : null,
        in_step: after ? null : (cell.steps?.first ?? null),
        devices,
        also_in: [],
      };
      found.push({ oom, cell });
    }
    if (cell.kind === 'step' && cell.steps) lastWindow = cell.steps.last;
  }
  return oncePerOom(found);
}

/**
 * memlens record's named and exit dumps (`<name>_step<N>/`, python/memlens/_record.py `_named_dir`)
 * hold what happened since the last window was cut, after step N: not a window of step N.
 */
function followsWindow(cell: RunCell): boolean {
  return cell.layout === 'memlens-record' && (cell.kind === 'exit' || cell.kind === 'manual');
}

/**
 * One OOM entry per process, named by one dump: the OOM dump written for it when there is one.
 * memlens record's OOM dump keeps the history going (`_on_oom`: clear=False), so its exit dump
 * holds the same entry, and a ring buffer that spans an OOM holds it in every later dump. An
 * entry is the same when the process, device, time and request are.
 */
function oncePerOom(found: { oom: RunOom; cell: RunCell }[]): RunOom[] {
  const owner = new Map<string, RunOom>();
  const key = (cell: RunCell, device: number, r: OomReport) =>
    r.time_us === null
      ? null
      : `${cell.rank}|${cell.pid}|${cell.replica}|${device}|${r.time_us}|${r.requested_bytes}`;
  const ordered = [...found].sort((a, b) => Number(b.cell.kind === 'oom') - Number(a.cell.kind === 'oom'));
  const kept = new Set<RunOom>();
  for (const { oom, cell } of ordered) {
    const devices = oom.devices
      .map((d) => ({
        device: d.device,
        reports: d.reports.filter((r) => {
          const k = key(cell, d.device, r);
          const first = k === null ? undefined : owner.get(k);
          if (first !== undefined && first !== oom) {
            if (!first.also_in.includes(oom.file)) first.also_in.push(oom.file);
            return false;
          }
          if (k !== null) owner.set(k, oom);
          return true;
        }),
      }))
      .filter((d) => d.reports.length > 0);
    if (cell.kind === 'oom' || devices.length > 0) kept.add(Object.assign(oom, { devices }));
  }
  return found.map((f) => f.oom).filter((o) => kept.has(o));
}
