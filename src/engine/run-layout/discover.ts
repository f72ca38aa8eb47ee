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
  megatronRanksFit,
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

/**
 * Any other layout: the last rank and step numbers the path's names carry, OOM if a name says so.
 * `dirs` are the folders at or below the run's root only: a folder the run sits in
 * (`qwen_lora_rank16/run/`) names no rank of it.
 */
function byNames(file: string, dirs: string[]): Placement {
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
}

/**
 * The producers' rules, each matching the exact names (and folder positions) its producer writes;
 * they see every folder above the file, since a producer's own folder (torchft's step folder above
 * `replica_<k>/`) may lie above the folder given.
 */
const RULES: Rule[] = [torchNpu, verl, torchtitan, composer, lmmsEngine, megatronBridge];

/** A path's names, `.` and `..` resolved as far as the path itself allows. */
function components(path: string): string[] {
  const out: string[] = [];
  for (const c of path.split(/[\\/]+/)) {
    if (c === '' || c === '.') continue;
    if (c === '..' && out.length > 0 && out.at(-1) !== '..') out.pop();
    else out.push(c);
  }
  return out;
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

/** A file's name (a trailing .gz removed), every folder above it, and those at or below its run's root. */
interface Located {
  path: string;
  file: string;
  dirs: string[];
  inRun: string[];
}

function place(l: Located): RunCell {
  return cellOf(
    l,
    RULES.reduce<Placement | null>((p, rule) => p ?? rule(l.file, l.dirs), null),
  );
}

/** The cell of a file placed by a producer's rule, else by its names; a rank from the folders if none. */
function cellOf({ path, file, inRun }: Located, byRule: Placement | null): RunCell {
  const placed = byRule ?? byNames(file, inRun);
  placed.replica ??= replicaOf(inRun);
  placed.rank ??= rankOfDirs(inRun);
  return { path, ...placed };
}

/**
 * Where each path's run starts: the first of `roots` (the folders the user gave) holding it; for
 * paths under no root (files named one by one), the deepest folder they all share. That folder's
 * own name is included where it is a rank or step folder (RUN_FOLDER).
 */
function locate(paths: string[], roots: string[]): Located[] {
  const rootParts = roots.map(components);
  const split = paths.map((path) => {
    const parts = components(path);
    const dirs = parts.slice(0, -1);
    const root = rootParts.find((r) => r.length <= dirs.length && r.every((c, i) => c === dirs[i]));
    return { path, file: (parts.at(-1) ?? path).replace(/\.gz$/i, ''), dirs, root };
  });
  const loose = split.filter((s) => s.root === undefined).map((s) => s.dirs);
  const shared = loose.length === 0 ? 0 : commonLength(loose);
  return split.map(({ root, ...s }) => {
    const start = root?.length ?? shared;
    // The root's own name counts only where it is a rank or step folder and nothing else: the
    // run in `qwen_lora_rank16/` is no rank 16's, while `rank3/` is rank 3's.
    const named = start > 0 && RUN_FOLDER.test(s.dirs[start - 1] ?? '');
    return { ...s, inRun: s.dirs.slice(named ? start - 1 : start) };
  });
}

/** A folder that is only a rank's or a step's: `rank3`, `rank_3`, `step_10`, `global_step5`, `iter2-4`. */
const RUN_FOLDER =
  /^(?:rank[_-]?\d+|(?:global_step|steps?|iter(?:ation)?s?|it|batch|epoch)[_-]?\d+(?:-\d+)?)$/i;

function commonLength(lists: string[][]): number {
  const first = lists[0]!;
  let n = 0;
  while (n < first.length && lists.every((l) => l[n] === first[n])) n++;
  return n;
}

/**
 * Megatron-Bridge's `<stem>_<N>` end dumps kept only where their folder fits it (megatronRanksFit):
 * the files of one folder and stem number 0 to n-1, and no folder of the run names a rank or step
 * (`rank0/step_10/snapshot_10.pickle` is step 10 of rank 0). Others are placed by their names.
 */
function checkMegatron(cells: RunCell[], located: Located[]): RunCell[] {
  const isEnd = (c: RunCell) => c.layout === 'megatron-bridge' && c.kind === 'end';
  const key = (l: Located) => [...l.dirs, l.file.replace(/_\d+\.pickle$/, '')].join('/');
  const groups = new Map<string, number[]>();
  cells.forEach((c, i) => {
    if (isEnd(c)) groups.set(key(located[i]!), [...(groups.get(key(located[i]!)) ?? []), c.rank!]);
  });
  return cells.map((c, i) => {
    const l = located[i]!;
    const fits = megatronRanksFit(groups.get(key(l)) ?? []) && !l.inRun.some(namesRankOrStep);
    return isEnd(c) && !fits ? cellOf(l, null) : c;
  });
}

/** verl-named files inside a folder memlens record wrote are memlens record's. */
function recordedBy(cells: RunCell[], recorded: string[]): RunCell[] {
  if (recorded.length === 0) return cells;
  const roots = recorded.map(components);
  const inRecorded = (path: string) => {
    const parts = components(path);
    return roots.some((r) => r.length < parts.length && r.every((c, i) => c === parts[i]));
  };
  return cells.map((c) =>
    c.layout === 'verl' && inRecorded(c.path) ? { ...c, layout: 'memlens-record' } : c,
  );
}

function namesRankOrStep(dir: string): boolean {
  return RANK.test(dir) || STEP.test(dir);
}

export interface DiscoverOptions {
  skipped?: LeftOut[];
  notRead?: LeftOut[];
  /** The run folders the user gave: only folders at or below them name a file's rank or step. */
  roots?: string[];
  /**
   * The folders memlens record wrote (they hold its `.memlens/` record). Its step windows carry
   * verl's names by design (python/memlens/_record.py), so only this tells them from verl's.
   */
  recorded?: string[];
}

/** Places each snapshot file of a run and puts them in run order. */
export function discoverRun(inputs: (RunInput | string)[], options: DiscoverOptions = {}): Run {
  const entries = inputs.map((i) => (typeof i === 'string' ? { path: i } : i));
  const mtimes = new Map(entries.map((e) => [e.path, e.mtimeMs]));
  const located = locate(
    entries.map((e) => e.path),
    options.roots ?? [],
  );
  const cells = recordedBy(checkMegatron(located.map(place), located), options.recorded ?? []);
  const ordered = runOrder(cells, mtimes);
  return {
    layout: mainLayout(cells),
    cells: ordered,
    unplaced: unplacedOf(ordered),
    skipped: options.skipped ?? [],
    notRead: options.notRead ?? [],
  };
}

/** Files whose names carry neither a rank nor a step. */
export function unplacedOf(cells: RunCell[]): string[] {
  return cells.filter((c) => c.rank === null && c.steps === null).map((c) => c.path);
}

/** The layout of most cells ('mixed' when several layouts place equal numbers). */
export function mainLayout(cells: RunCell[]): LayoutName | 'mixed' {
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
 * Within one step: the dump before it ran (verl's post-update dump), the periodic window, named and
 * end-of-training dumps, and last the OOM dump that ended it.
 */
const KIND_ORDER: Record<CellKind, number> = {
  // verl writes step N's post-update dump after step N-1's update, before step N runs (layouts.ts).
  'post-update': -1,
  step: 0,
  manual: 2,
  end: 3,
  exit: 4,
  other: 5,
  oom: 6,
};

function kindOrder(c: RunCell): number {
  return KIND_ORDER[c.kind];
}
