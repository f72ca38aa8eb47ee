/**
 * Which snapshot of a training run each file is: its rank, its step window, and whether it is a
 * regular window dump or an OOM dump. Pure: paths (and, when known, modification times) in, an
 * ordered run out; reading directories is the caller's job.
 *
 * The layouts are those their producers write (see each rule); anything else is placed by the
 * rank and step numbers its names carry, and what cannot be placed is said, never guessed.
 */
import { naturalCompare } from './natural-order.js';

export type CellKind = 'step' | 'oom' | 'other';

export type LayoutName = 'verl' | 'torchtitan' | 'composer' | 'lmms-engine' | 'megatron-bridge' | 'names';

export interface StepWindow {
  first: number;
  last: number;
}

export interface RunCell {
  /** The path as given. */
  path: string;
  rank: number | null;
  pid: number | null;
  /** The steps the file's trace covers (a single step has first === last), when the names say. */
  steps: StepWindow | null;
  kind: CellKind;
  /** The layout whose rule placed the file. */
  layout: LayoutName;
  /** An OOM dump's own time stamp as its directory names it (verl's oom_<YYYYmmdd-HHMMSS-ffffff>). */
  stamp: string | null;
}

export interface RunInput {
  path: string;
  /** Modification time, used to place an OOM dump after the window it follows. */
  mtimeMs?: number;
}

export interface Run {
  /** The layout of most cells ('mixed' when several layouts place equal numbers). */
  layout: LayoutName | 'mixed';
  /** In run order: step windows by step then rank, each OOM dump after the window it follows. */
  cells: RunCell[];
  /** Files whose names carry neither a rank nor a step (still cells, of kind 'other'). */
  unplaced: string[];
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

type Placement = Omit<RunCell, 'path'>;
type Rule = (file: string, dirs: string[]) => Placement | null;

const num = (s: string | undefined): number | null => (s === undefined ? null : Number(s));

function cell(layout: LayoutName, kind: CellKind, rank: number | null, steps: StepWindow | null): Placement {
  return { layout, kind, rank, pid: null, steps, stamp: null };
}

function stepWindow(first: string | undefined, last?: string): StepWindow | null {
  if (first === undefined) return null;
  return { first: Number(first), last: Number(last ?? first) };
}

/** verl's torch_memory profiler: step<N>/ or steps<A>-<B>/, and oom_<stamp>/ on OOM. */
const verl: Rule = (file, dirs) => {
  const m = /^torch_memory_(oom_)?rank(\d+)_pid(\d+)\.pickle$/.exec(file);
  if (m === null) return null;
  const dir = dirs.at(-1) ?? '';
  const placed = cell('verl', m[1] ? 'oom' : 'step', num(m[2]), null);
  placed.pid = num(m[3]);
  const oom = /^oom_(.+)$/.exec(dir);
  if (m[1] && oom) placed.stamp = oom[1]!;
  const step = /^steps?(\d+)(?:-(\d+))?$/.exec(dir);
  if (step) placed.steps = stepWindow(step[1], step[2]);
  if (!m[1] && step === null) placed.kind = 'other';
  return placed;
};

/** torchtitan: memory_snapshot/iteration_<N>/rank<R>_memory_snapshot.pickle, iteration_<N>_exit/ on OOM. */
const torchtitan: Rule = (file, dirs) => {
  const m = /^rank(\d+)_memory_snapshot\.pickle$/.exec(file);
  const dir = /^iteration_(\d+)(_exit)?$/.exec(dirs.at(-1) ?? '');
  if (m === null || dir === null) return null;
  return cell('torchtitan', dir[2] ? 'oom' : 'step', num(m[1]), stepWindow(dir[1]));
};

/** composer: rank<R>.<batch>.memory_snapshot.pickle; its OOMObserver writes rank<R>.oom_snapshot.pickle. */
const composer: Rule = (file) => {
  const m = /^rank(\d+)\.(?:(\d+)\.memory_snapshot|(oom)_snapshot)\.pickle$/.exec(file);
  if (m === null) return null;
  return cell('composer', m[3] ? 'oom' : 'step', num(m[1]), stepWindow(m[2]));
};

/** lmms-engine dumps oom_rank<N>.pickle; Megatron-Bridge memory_trace_<rank>.pickle. */
const lmmsEngine: Rule = (file) => {
  const m = /^oom_rank(\d+)\.pickle$/.exec(file);
  return m && cell('lmms-engine', 'oom', num(m[1]), null);
};

const megatronBridge: Rule = (file) => {
  const m = /^memory_trace_(\d+)\.pickle$/.exec(file);
  return m && cell('megatron-bridge', 'other', num(m[1]), null);
};

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
  return cell('names', oom ? 'oom' : steps ? 'step' : 'other', rank, steps);
};

const RULES: Rule[] = [verl, torchtitan, composer, lmmsEngine, megatronBridge, byNames];

function components(path: string): string[] {
  return path.split(/[\\/]+/).filter((c) => c !== '' && c !== '.');
}

function baseName(path: string): string {
  return components(path).at(-1) ?? path;
}

function place(path: string): RunCell {
  const parts = components(path);
  const file = parts.at(-1) ?? path;
  const dirs = parts.slice(0, -1);
  const lower = file.replace(/\.gz$/i, '');
  for (const rule of RULES) {
    const placed = rule(lower, dirs);
    if (placed) return { path, ...placed };
  }
  throw new Error('unreachable: the names rule places every file');
}

/** Places each snapshot file of a run and puts them in run order. */
export function discoverRun(inputs: (RunInput | string)[]): Run {
  const entries = inputs.map((i) => (typeof i === 'string' ? { path: i } : i));
  const mtimes = new Map(entries.map((e) => [e.path, e.mtimeMs]));
  const cells = entries.map((e) => place(e.path));
  const ordered = runOrder(cells, mtimes);
  return {
    layout: mainLayout(cells),
    cells: ordered,
    unplaced: ordered.filter((c) => c.rank === null && c.steps === null).map((c) => c.path),
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

/** Within one step window, regular dumps before the OOM dump that ended it. */
function kindOrder(c: RunCell): number {
  return c.kind === 'step' ? 0 : c.kind === 'other' ? 1 : 2;
}
