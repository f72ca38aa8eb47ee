/**
 * Which snapshot of a training run each file is: its rank, its step window, and whether it is a
 * regular window dump or an OOM dump. Pure: paths (and, when known, modification times) in, an
 * ordered run out; reading directories is the caller's job.
 *
 * The layouts are those their producers write (see each rule); anything else is placed by the
 * rank and step numbers its names carry, and what cannot be placed is said, never guessed.
 */
import {
  type CellKind,
  composer,
  type LayoutName,
  lmmsEngine,
  megatronBridge,
  type Placement,
  placement,
  type Rule,
  replicaOf,
  type StepWindow,
  stepWindow,
  torchNpu,
  torchtitan,
  verl,
} from './layouts.js';
import { naturalCompare } from './natural-order.js';

export type { CellKind, LayoutName, StepWindow };

export interface RunCell extends Placement {
  /** The path as given. */
  path: string;
}

export interface RunInput {
  path: string;
  /** Modification time, used to place an OOM dump after the window it follows. */
  mtimeMs?: number;
}

/** A file found in a run's directories and left out, or a directory that could not be read, and why. */
export interface LeftOut {
  path: string;
  reason: string;
}

export interface Run {
  /** The layout of most cells ('mixed' when several layouts place equal numbers). */
  layout: LayoutName | 'mixed';
  /** In run order: step windows by step then rank, each OOM dump after the window it follows. */
  cells: RunCell[];
  /** Files whose names carry neither a rank nor a step (still cells, of kind 'other'). */
  unplaced: string[];
  /** Files found beside the snapshots that are not snapshots (configs, Chrome traces, plots). */
  skipped: LeftOut[];
  /** Directories and entries of the run that could not be read (their snapshots are missing). */
  notRead: LeftOut[];
}

/** Snapshot files by name: pickles and JSON, optionally gzipped. */
const SNAPSHOT_NAME = /\.(pickle|pkl|json)(\.gz)?$/i;
/** Files in run directories that are not snapshots although their extension says JSON. */
const NOT_SNAPSHOTS = new Set(['run.json', 'manifest.json', 'package.json']);

/**
 * Directories of a run that hold no snapshots although their files may end in .json: the cycle
 * graphs `memlens record --cycles` writes (`cycles/`), and hidden ones (`.memlens/`, where the
 * recorder keeps its per-process state).
 */
export function holdsSnapshots(dirName: string): boolean {
  return dirName !== 'cycles' && !dirName.startsWith('.');
}

export function isSnapshotName(name: string): boolean {
  const base = baseName(name);
  return SNAPSHOT_NAME.test(base) && !NOT_SNAPSHOTS.has(base.toLowerCase());
}

const RANK = /(?:^|[^a-z])rank[_-]?(\d+)/i;
const STEP = /(?:^|[^a-z])(?:global_step|steps?|iter(?:ation)?s?|it|batch|epoch)[_-]?(\d+)(?:-(\d+))?/i;
const OOM = /(?:^|[^a-z])oom(?:[^a-z]|$)/i;

/** Any other layout: the last rank and step numbers the path's names carry, OOM if a name says so. */
const byNames: Rule = (file, dirs) => {
  const names = [...dirs, file.replace(SNAPSHOT_NAME, '')];
  let rank: number | null = null;
  let steps: StepWindow | null = null;
  for (const n of names) {
    const r = RANK.exec(n);
    if (r) rank = Number(r[1]);
    const s = STEP.exec(n.replace(RANK, ''));
    if (s) steps = stepWindow(s[1], s[2]);
  }
  const oom = names.some((n) => OOM.test(n));
  return placement('names', oom ? 'oom' : steps ? 'step' : 'other', rank, steps);
};

const RULES: Rule[] = [torchNpu, verl, torchtitan, composer, lmmsEngine, megatronBridge, byNames];

function components(path: string): string[] {
  return path.split(/[\\/]+/).filter((c) => c !== '' && c !== '.');
}

function baseName(path: string): string {
  return components(path).at(-1) ?? path;
}

/** The rank a directory above names (a per-rank OOM_SNAPSHOT_PATH), for rules whose names have none. */
function rankOfDirs(dirs: string[]): number | null {
  for (const d of [...dirs].reverse()) {
    const r = RANK.exec(d);
    if (r) return Number(r[1]);
  }
  return null;
}

function place(path: string): RunCell {
  const parts = components(path);
  const file = (parts.at(-1) ?? path).replace(/\.gz$/i, '');
  const dirs = parts.slice(0, -1);
  for (const rule of RULES) {
    const placed = rule(file, dirs);
    if (placed === null) continue;
    placed.replica ??= replicaOf(dirs);
    placed.rank ??= rankOfDirs(dirs);
    return { path, ...placed };
  }
  throw new Error('unreachable: the names rule places every file');
}

/** Places each snapshot file of a run and puts them in run order. */
export function discoverRun(
  inputs: (RunInput | string)[],
  leftOut: { skipped?: LeftOut[]; notRead?: LeftOut[] } = {},
): Run {
  const entries = inputs.map((i) => (typeof i === 'string' ? { path: i } : i));
  const mtimes = new Map(entries.map((e) => [e.path, e.mtimeMs]));
  const cells = entries.map((e) => place(e.path));
  const ordered = runOrder(cells, mtimes);
  return {
    layout: mainLayout(cells),
    cells: ordered,
    unplaced: ordered.filter((c) => c.rank === null && c.steps === null).map((c) => c.path),
    skipped: leftOut.skipped ?? [],
    notRead: leftOut.notRead ?? [],
  };
}

function mainLayout(cells: RunCell[]): LayoutName | 'mixed' {
  const counts = new Map<LayoutName, number>();
  for (const c of cells) counts.set(c.layout, (counts.get(c.layout) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  if (ranked.length === 0) return 'names';
  if (ranked.length > 1 && ranked[0]![1] === ranked[1]![1]) return 'mixed';
  return ranked[0]![0];
}

/**
 * Step windows by (first step, last step, rank, pid, name); then each dump without a step of its
 * own goes after the window written before it (by modification time), or at the end when times
 * are unknown; OOM dumps in the order of their stamps.
 */
function runOrder(cells: RunCell[], mtimes: Map<string, number | undefined>): RunCell[] {
  const byPlace = (a: RunCell, b: RunCell): number =>
    (a.steps?.first ?? 0) - (b.steps?.first ?? 0) ||
    (a.steps?.last ?? 0) - (b.steps?.last ?? 0) ||
    kindOrder(a) - kindOrder(b) ||
    naturalCompare(a.tag ?? '', b.tag ?? '') ||
    (a.replica ?? -1) - (b.replica ?? -1) ||
    (a.rank ?? -1) - (b.rank ?? -1) ||
    (a.pid ?? -1) - (b.pid ?? -1) ||
    naturalCompare(a.stamp ?? '', b.stamp ?? '') ||
    naturalCompare(a.path, b.path);
  const windows = cells.filter((c) => c.steps !== null).sort(byPlace);
  const loose = cells.filter((c) => c.steps === null).sort(byPlace);
  const out = [...windows];
  for (const c of loose) out.splice(insertionPoint(out, mtimes, mtimes.get(c.path)), 0, c);
  return out;
}

/**
 * After the step window of the last window written at or before time `t` (all its ranks: ranks
 * dump the same window at about the same time); at the end when times are unknown.
 */
function insertionPoint(
  out: RunCell[],
  mtimes: Map<string, number | undefined>,
  t: number | undefined,
): number {
  if (t === undefined) return out.length;
  let last = -1;
  for (let i = 0; i < out.length; i++) {
    const w = mtimes.get(out[i]!.path);
    if (out[i]!.steps !== null && w !== undefined && w <= t) last = i;
  }
  if (last < 0) return out.some((c) => c.steps !== null) ? 0 : out.length;
  const steps = out[last]!.steps!;
  let at = last + 1;
  const sameGap = (c: RunCell) =>
    c.steps === null || (c.steps.first === steps.first && c.steps.last === steps.last);
  while (at < out.length && sameGap(out[at]!)) at++;
  return at;
}

/**
 * Within one step: the periodic window, the dump after the update, named and end-of-training
 * dumps, and last the OOM dump that ended it.
 */
const KIND_ORDER: Record<CellKind, number> = {
  step: 0,
  'post-update': 1,
  manual: 2,
  end: 3,
  exit: 4,
  other: 5,
  oom: 6,
};

function kindOrder(c: RunCell): number {
  return KIND_ORDER[c.kind];
}
