import fs from 'node:fs';
import path from 'node:path';
import {
  type CycleCitation,
  type CycleGraph,
  candidateCells,
  citeWindowCycles,
  gcCache,
  holdsCudaTensors,
  holdsStep,
  NO_CUDA_TENSOR,
  noWindowReason,
  parseCycleText,
  spanHolds,
  type TimeSpan,
  traceSpan,
  type WindowMatch,
  windowCycles,
} from '../../engine/analyses/cycles/index.js';
import type { DeviceGc, GcOptions } from '../../engine/analyses/gc/index.js';
import { SnapshotError } from '../../engine/base/index.js';
import type { DeviceModel, Snapshot } from '../../engine/model/index.js';
import { discoverRun, naturalCompare, type Run } from '../../engine/run-layout/index.js';
import { isDirectory, mtime, snapshotsUnder } from '../files/expand-paths.js';
import { openSnapshot } from '../files/open-snapshot.js';
import { EXIT_BAD_INPUT, reportError } from '../files/report-error.js';

/** Where `memlens record --cycles` writes the graphs, under the run's directory. */
export const CYCLES_DIR = 'cycles';
/** A cycle graph is small (nodes are bounded); anything far bigger is not one. */
const MAX_CYCLE_FILE = 64 * 2 ** 20;

export interface CycleInputs {
  /** Cycle files, in the order given (a directory's in natural order). */
  cycles: string[];
  /** Snapshot files given or found beside them, as one run. */
  run: Run;
}

/**
 * The arguments of a command that reads cycles: run directories (their `cycles/*.json` and their
 * snapshots), a `cycles/` directory itself (its run is the directory above), cycle files, and
 * snapshot files to link them to. A .json file is a cycle file when it sits in a `cycles/`
 * directory or its first bytes name the schema key; any other file is a snapshot.
 */
export function gatherCycleInputs(args: string[]): CycleInputs {
  const cycles: string[] = [];
  const roots: string[] = [];
  const files: string[] = [];
  for (const arg of args) {
    if (isDirectory(arg)) {
      const isCycles = path.basename(path.resolve(arg)) === CYCLES_DIR;
      roots.push(isCycles ? path.dirname(arg) : arg);
      cycles.push(...cycleFilesIn(isCycles ? arg : path.join(arg, CYCLES_DIR)));
    } else if (isCycleFile(arg)) cycles.push(arg);
    else files.push(arg);
  }
  // gc and diagnose ask on every run directory: without a cycle file, its walk would be wasted
  // (the command walks it again to decode it).
  const snapshots = cycles.length === 0 ? [] : [...new Set([...files, ...roots.flatMap(snapshotsUnder)])];
  return {
    cycles: [...new Set(cycles)],
    run: discoverRun(
      snapshots.map((p) => ({ path: p, mtimeMs: mtime(p) })),
      { roots },
    ),
  };
}

function cycleFilesIn(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .sort(naturalCompare)
    .map((n) => path.join(dir, n));
}

export function isCycleFile(p: string): boolean {
  if (!p.toLowerCase().endsWith('.json')) return false;
  if (path.basename(path.dirname(path.resolve(p))) === CYCLES_DIR) return true;
  try {
    const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      if (!fs.fstatSync(fd).isFile()) return false;
      const head = Buffer.alloc(256);
      const n = fs.readSync(fd, head, 0, head.length, 0);
      return head.subarray(0, n).toString('utf8').includes('"memlens_cycles"');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** Reads and checks one cycle file; a SnapshotError in one line when it is not one. */
export function readCycleFile(p: string): CycleGraph {
  let fd: number;
  try {
    // Non-blocking and checked on the descriptor: a FIFO or a device named *.json would block the
    // read (and a view server's every request with it) for ever.
    fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw new SnapshotError(`cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new SnapshotError('not a memlens cycle file: not a regular file');
    if (st.size > MAX_CYCLE_FILE)
      throw new SnapshotError(
        `not a memlens cycle file: ${st.size} bytes, far more than a cycle graph holds`,
      );
    return parseCycleText(fs.readFileSync(fd, 'utf8'));
  } finally {
    fs.closeSync(fd);
  }
}

interface Loaded {
  snapshot: Snapshot;
  gcOf: (d: DeviceModel) => DeviceGc;
}

/** Snapshots kept loaded at once: cycles come sorted by rank and time, so a window's are together. */
const KEEP_LOADED = 2;

/**
 * Finds each cycle's window among the run's snapshots, loading a snapshot only to learn what times
 * its trace spans (remembered) or to link a cycle to it (the last few kept). A snapshot that
 * cannot be read is said once and left out.
 */
export class WindowFinder {
  private readonly spans = new Map<string, TimeSpan | null | 'unreadable'>();
  private readonly loaded = new Map<string, Loaded>();

  constructor(
    private readonly run: Run,
    private readonly onError: (file: string, e: unknown) => void = reportError,
  ) {}

  async match(g: CycleGraph): Promise<{ match: WindowMatch; gcOf?: (d: DeviceModel) => DeviceGc }> {
    if (!holdsCudaTensors(g)) return { match: NO_CUDA_TENSOR };
    const cells = candidateCells(this.run, g);
    for (const c of cells) {
      if (this.spans.get(c.path) === 'unreadable') continue;
      if (this.spans.has(c.path) && !spanHolds(this.spans.get(c.path) as TimeSpan | null, g.time_us))
        continue;
      const l = await this.load(c.path);
      if (l !== null && spanHolds(traceSpan(l.snapshot), g.time_us))
        return { match: { file: c.path, by: 'time', snapshot: l.snapshot }, gcOf: l.gcOf };
    }
    const byStep = cells.find((c) => holdsStep(c, g.step) && this.spans.get(c.path) !== 'unreadable');
    const l = byStep && (await this.load(byStep.path));
    if (byStep && l) return { match: { file: byStep.path, by: 'step', snapshot: l.snapshot }, gcOf: l.gcOf };
    return { match: { file: null, reason: noWindowReason(this.run, g) } };
  }

  private async load(p: string): Promise<Loaded | null> {
    const kept = this.loaded.get(p);
    if (kept) return kept;
    try {
      const snapshot = await openSnapshot(p, { progress: false });
      this.spans.set(p, traceSpan(snapshot));
      const l = { snapshot, gcOf: gcCache(snapshot) };
      this.loaded.set(p, l);
      if (this.loaded.size > KEEP_LOADED) this.loaded.delete(this.loaded.keys().next().value!);
      return l;
    } catch (e) {
      this.spans.set(p, 'unreadable');
      this.onError(p, e);
      return null;
    }
  }
}

/** Cycle files among a command's arguments, read, beside the snapshot arguments left for runFiles. */
export interface RecordedCycles {
  /** The arguments that name snapshots or run directories (cycle files and `cycles/` left out). */
  snapshotArgs: string[];
  graphs: { file: string; graph: CycleGraph }[];
  run: Run;
}

/**
 * For commands over snapshots that cite recorded cycles (gc): the cycle files given or in the runs'
 * `cycles/`, each read (a bad one said on stderr, exit code 2, the rest still used).
 */
export function recordedCycles(args: string[]): RecordedCycles {
  const { cycles, run } = gatherCycleInputs(args);
  const graphs: RecordedCycles['graphs'] = [];
  for (const file of cycles) {
    try {
      graphs.push({ file, graph: readCycleFile(file) });
    } catch (e) {
      reportError(file, e);
      process.exitCode = EXIT_BAD_INPUT;
    }
  }
  const snapshotArgs = args.filter((a) =>
    isDirectory(a) ? path.basename(path.resolve(a)) !== CYCLES_DIR : !isCycleFile(a),
  );
  if (snapshotArgs.length === 0)
    throw new Error(`${args.join(', ')}: no snapshot among these (memlens cycles lists cycle files alone)`);
  return { snapshotArgs, graphs, run };
}

/** The recorded cycles whose window is this snapshot (its rank's, collected in its trace's span). */
export function windowGraphs(rc: RecordedCycles, snapshot: Snapshot, file: string): RecordedCycles['graphs'] {
  // No cycles recorded (the usual case): the trace's time span, a pass over it, is not needed.
  if (rc.graphs.length === 0) return [];
  const tagged = rc.graphs.map((g) => ({ ...g.graph, entry: g }));
  return windowCycles(rc.run, file, traceSpan(snapshot), tagged).map((g) => g.entry);
}

/**
 * For each device's bursts (`per`, computed with the command's options), the recorded cycles of
 * this snapshot's window whose tensors each burst freed.
 */
export function citeCycles(
  rc: RecordedCycles,
  snapshot: Snapshot,
  file: string,
  per: DeviceGc[],
  gcOpts: GcOptions,
): CycleCitation[][][] {
  return citeWindowCycles(snapshot, file, per, windowGraphs(rc, snapshot, file), gcOpts);
}
