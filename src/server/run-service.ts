/**
 * The run behind `memlens view DIR`: its snapshots decoded once (through the result cache, as
 * `memlens run` does), the run report the Run page draws, and the served-file list in run order.
 * With watching on, the directories are polled and each new snapshot is added once complete.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  columnLabel,
  type RunReport,
  type RunSnapshot,
  runReport,
  stepLabel,
} from '../engine/analyses/run/index.js';
import { discoverRun, type LeftOut, type Run, type RunCell } from '../engine/run-layout/index.js';
import { statKey } from '../node/cache/result-cache.js';
import { leftOutLines } from '../node/files/expand-paths.js';
import { type RunScan, scanRun } from '../node/files/scan-run.js';
import { isJsonName, notSnapshotReason } from '../node/files/sniff-snapshot.js';
import { decodeRun } from '../node/workers/decode-run.js';
import type { RunState } from '../wire/run-state.js';
import { identityOf, type ServedFile } from './snapshot-files.js';

/** How often a report of the files decoded so far is made while a large run decodes. */
const PARTIAL_MS = 2000;

/** How often a watched run's directories are read (a file must look the same on two reads). */
export const POLL_MS = 2000;

/** Names a writer uses while a file is incomplete (renamed when done): never decoded. */
const TEMPORARY = /\.(tmp|temp|partial|part|incomplete|swp)(\.|$)|^\.|~$/i;

interface Known {
  /** size:mtime when decoded; a file rewritten since is decoded again. */
  signature: string;
  snapshot: RunSnapshot;
  served: number;
}

export class RunService {
  private readonly known = new Map<string, Known>();
  /** Each file's index in the served list. */
  private readonly served = new Map<string, number>();
  /** Files seen on the last poll but not yet decoded, with their signature then. */
  private readonly seen = new Map<string, string>();
  private version = 0;
  private report: RunReport | null = null;
  private progress: RunState['progress'] = null;
  private timer: NodeJS.Timeout | null = null;
  private busy: Promise<void> = Promise.resolve();
  private closed = false;
  /** What the last read of the directories left out (not snapshots) or could not read. */
  private skipped: LeftOut[] = [];
  private notRead: LeftOut[] = [];
  /** Folders of the run that memlens record wrote (scanRun), for the layout's name. */
  private recorded: string[] = [];
  /** The scans made before start (firstScan), which start takes instead of reading the directories again. */
  private firstScans: RunScan[] | undefined;
  /** Why a JSON file is not a snapshot, by its content: kept per file while its stat is unchanged. */
  private readonly sniffJson = statMemo(notSnapshotReason);
  private readonly sniff = (file: string) => (isJsonName(file) ? this.sniffJson(file) : null);

  /**
   * @param dirs run directories, polled when watching
   * @param loose snapshot files named on their own, part of the same run
   * @param files the server's list (append-only: a file keeps its index, so its URL stays valid)
   */
  constructor(
    private readonly dirs: string[],
    private readonly loose: string[],
    readonly files: ServedFile[],
  ) {}

  get root(): string {
    return this.dirs.length === 1 ? this.dirs[0]! : '.';
  }

  /**
   * The directory `dir` (one of the run's) as read at start: `memlens view` checks what it holds
   * from the same scan that start then decodes, so a run is read once before it is served.
   */
  firstScan(dir: string): RunScan {
    this.firstScans ??= this.scanDirs();
    return this.firstScans[this.dirs.indexOf(dir)] ?? scanRun(dir, undefined, this.sniff);
  }

  /** Decodes every snapshot there now; says on stderr, as `memlens run` does, what was left out. */
  start(): Promise<void> {
    const found = this.scan(this.firstScans);
    this.firstScans = undefined;
    for (const dir of this.dirs) {
      const mine = (l: LeftOut) => !path.relative(dir, l.path).startsWith('..');
      const run = { notRead: this.notRead.filter(mine), skipped: this.skipped.filter(mine) } as Run;
      for (const line of leftOutLines(dir, run, 'the Run page lists them')) process.stderr.write(`${line}\n`);
    }
    return this.add([...this.loose, ...found]);
  }

  /** Whether every part of the run's directories could be read. */
  get complete(): boolean {
    return this.notRead.length === 0;
  }

  /** The snapshot files in the directories now, keeping what was left out for the report. */
  private scan(scans = this.scanDirs()): string[] {
    this.skipped = scans.flatMap((s) => s.skipped);
    this.notRead = scans.flatMap((s) => s.notRead);
    this.recorded = scans.flatMap((s) => s.recorded);
    return scans.flatMap((s) => s.files);
  }

  /** Each directory read now; a JSON file unchanged since it was last sniffed is not read again. */
  private scanDirs(): RunScan[] {
    return this.dirs.map((d) => scanRun(d, undefined, this.sniff));
  }

  /** Polls the directories every `ms`; files must be stable across two polls to be taken. */
  watch(ms = POLL_MS): void {
    this.timer = setInterval(() => {
      // A poll that fails (a file removed between listing and reading) is said, and the next one runs.
      this.busy = this.busy
        .then(() => this.poll())
        .catch((e: Error) => {
          process.stderr.write(`memlens: ${e.message.split('\n')[0]}\n`);
        });
    }, ms);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  state(since?: number): RunState {
    const same = since === this.version && this.report !== null;
    return {
      version: this.version,
      watching: this.timer !== null,
      progress: this.progress,
      report: same || this.report === null ? null : lean(this.report),
      names: this.listed(same, (i) => this.files[i]!.name),
      urls: this.listed(same, (i) => `files/${i}`),
    };
  }

  private listed(same: boolean, f: (served: number) => string): string[] {
    if (same || this.report === null) return [];
    return this.report.snapshots.map((s) => f(this.served.get(s.file)!));
  }

  private async poll(): Promise<void> {
    if (this.closed) return;
    const ready: string[] = [];
    const found = this.scan().filter((p) => !TEMPORARY.test(path.basename(p)));
    for (const p of found) {
      const sig = signature(p);
      if (sig === null || this.known.get(p)?.signature === sig) continue;
      if (this.seen.get(p) === sig) {
        ready.push(p);
        this.seen.delete(p);
      } else this.seen.set(p, sig);
    }
    const listed = new Set(found);
    // A file deleted from the run (a window dropped to save disk) leaves the page.
    const gone = [...this.known.keys()].filter((p) => !listed.has(p) && !this.loose.includes(p));
    for (const p of gone) this.known.delete(p);
    if (ready.length > 0) await this.add(ready);
    else if (gone.length > 0) this.refresh();
  }

  private async add(paths: string[]): Promise<void> {
    if (paths.length === 0) return this.refresh();
    const batch = discoverRun(
      paths.map((p) => ({ path: p, mtimeMs: mtime(p) })),
      { roots: this.dirs, recorded: this.recorded },
    );
    // Listed at once, in run order, so the page can open a file while the others decode.
    const served = new Map(batch.cells.map((c) => [c.path, this.serve(c)]));
    const signatures = new Map(paths.map((p) => [p, signature(p) ?? '']));
    const keep = (s: RunSnapshot) =>
      this.known.set(s.cell.path, {
        signature: signatures.get(s.cell.path)!,
        snapshot: s,
        served: served.get(s.cell.path)!,
      });
    // The first file decoded is shown at once (the page has something to open), then every PARTIAL_MS.
    let shown = 0;
    await decodeRun(batch, {
      cache: true,
      progress: false,
      onDone: (done, total) => {
        this.progress = done < total ? { done, total } : null;
      },
      // The page fills in as files finish: the report is redone now and then, not per file.
      onResult: (s) => {
        keep(s);
        if (Date.now() - shown < PARTIAL_MS) return;
        shown = Date.now();
        this.refresh();
      },
    });
    if (this.closed) return;
    this.refresh();
  }

  /**
   * Appends the file to the served list, or lists it anew where the watcher took a rewrite of it:
   * the file now there is the one served, under the same index (so its URL stays valid). A rewrite
   * keeps its place: a path that now leads elsewhere (a link put there) keeps its listing, which
   * the server then refuses to serve.
   */
  private serve(cell: RunCell): number {
    const file = cell.path;
    const dir = this.dirs.find((d) => !path.relative(d, file).startsWith('..'));
    const name = dir === undefined ? file : path.join(path.basename(dir), path.relative(dir, file));
    const real = fs.realpathSync(file);
    const st = fs.statSync(real, { bigint: true });
    const entry = {
      name,
      label: cellLabel(cell),
      path: real,
      size: Number(st.size),
      identity: identityOf(st),
    };
    const listed = this.served.get(file);
    if (listed !== undefined && this.files[listed]!.path !== real) return listed;
    if (listed !== undefined) {
      this.files[listed] = entry;
      return listed;
    }
    this.files.push(entry);
    this.served.set(file, this.files.length - 1);
    return this.files.length - 1;
  }

  private refresh(): void {
    const run: Run = discoverRun(
      [...this.known.keys()].map((p) => ({ path: p, mtimeMs: mtime(p) })),
      { skipped: this.skipped, notRead: this.notRead, roots: this.dirs, recorded: this.recorded },
    );
    const snapshots = run.cells.map((cell) => ({ ...this.known.get(cell.path)!.snapshot, cell }));
    this.report = runReport(this.root, run, snapshots);
    // Labelled as the report places them: the decoded files may settle what the names could not.
    for (const s of this.report.snapshots) {
      const f = this.files[this.known.get(s.file)!.served]!;
      f.label = cellLabel(placedCell(s));
      f.size = fs.statSync(s.file, { throwIfNoEntry: false })?.size ?? f.size;
    }
    this.version++;
  }
}

type Placed = Pick<RunCell, 'kind' | 'steps' | 'tag' | 'replica' | 'rank'>;

function placedCell(s: RunReport['snapshots'][number]): Placed {
  return { ...s, steps: s.step === null ? null : { first: s.step, last: s.last_step ?? s.step } };
}

/** "step 3 · rank 1", "post 3 · rank 1", "OOM · replica 1 · rank 2": how the file list names a cell. */
export function cellLabel(cell: Placed): string {
  // A file its names say nothing about keeps an empty label (as a file named on its own).
  const plain = cell.kind === 'step' || (cell.kind === 'other' && cell.tag === null);
  const where = plain
    ? cell.steps === null
      ? ''
      : `${cell.steps.first === cell.steps.last ? 'step' : 'steps'} ${stepLabel(cell.steps)}`
    : columnLabel(cell);
  return [
    where,
    cell.replica === null ? '' : `replica ${cell.replica}`,
    cell.rank === null ? '' : `rank ${cell.rank}`,
  ]
    .filter(Boolean)
    .join(' · ');
}

/**
 * `f` of a file, computed again only when the file's size, mtimes or inode changed: a watched run
 * is polled every POLL_MS, and each JSON file in it would otherwise be opened and inflated as often.
 */
function statMemo<T>(f: (file: string) => T): (file: string) => T {
  const known = new Map<string, { stat: string; value: T }>();
  return (file) => {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (st === undefined) return f(file);
    const stat = statKey(file, st);
    const seen = known.get(file);
    if (seen?.stat === stat) return seen.value;
    const value = f(file);
    known.set(file, { stat, value });
    return value;
  };
}

function signature(p: string): string | null {
  const st = fs.statSync(p, { throwIfNoEntry: false });
  return st === undefined ? null : statKey(p, st);
}

function mtime(p: string): number | undefined {
  return fs.statSync(p, { throwIfNoEntry: false })?.mtimeMs;
}

function lean(r: RunReport): RunReport {
  return { ...r, snapshots: r.snapshots.map((s) => ({ ...s, devices: [] })) };
}
