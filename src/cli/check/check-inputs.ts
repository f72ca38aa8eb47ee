/**
 * What `memlens check` reads: the snapshot or run to judge (a run decoded as `memlens run` does,
 * through the result cache), a baseline (the same, or a saved summary), and the budgets of the
 * repository's pyproject.toml ([tool.memlens.check]).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { CheckSubject } from '../../engine/analyses/check/index.js';
import {
  type Baseline,
  BaselineError,
  baselineOf,
  fragmentationPlace,
  measure,
  parseBaseline,
} from '../../engine/analyses/check/index.js';
import { fragmentationBlame } from '../../engine/analyses/fragmentation/index.js';
import { leaksOf } from '../../engine/analyses/leaks/index.js';
import { cellResult, runDevices, runReport } from '../../engine/analyses/run/index.js';
import type { Snapshot } from '../../engine/model/index.js';
import { discoverRun } from '../../engine/run-layout/index.js';
import { expandPaths, isDirectory } from '../../node/files/expand-paths.js';
import { openSnapshot } from '../../node/files/open-snapshot.js';
import { decodeRun } from '../../node/workers/decode-run.js';

export interface SubjectOptions {
  cache: boolean;
  jobs?: number;
  progress: boolean;
}

export interface LoadedSubject {
  subject: CheckSubject;
  /**
   * Reads the segments and pinning sites behind the fragmentation figure into the subject: they
   * need the model of the file where the figure is largest, which a run's cells do not keep (that
   * file is decoded again), so only a broken fragmentation rule asks for them.
   */
  explainFragmentation(): Promise<void>;
}

/** A directory as a run (every snapshot must read), a file as a run of one with its leaks. */
export async function loadSubject(p: string, opts: SubjectOptions): Promise<LoadedSubject> {
  if (isDirectory(p)) {
    const { root, run } = expandPaths([p]).runs[0]!;
    const snapshots = await decodeRun(run, opts);
    const bad = snapshots.find((s) => s.result === null);
    if (bad !== undefined) throw new Error(`${bad.cell.path}: ${bad.error ?? 'could not be read'}`);
    const results = new Map(snapshots.map((s) => [s.cell.path, s.result!]));
    const subject: CheckSubject = {
      label: p,
      kind: 'run',
      report: runReport(root, run, snapshots),
      results,
      leaks: null,
    };
    return { subject, explainFragmentation: explainer(subject, (f) => open(f, opts)) };
  }
  const snapshot = await open(p, opts);
  const run = discoverRun([p]);
  const result = cellResult(snapshot);
  const cell = run.cells[0]!;
  const subject: CheckSubject = {
    label: p,
    kind: 'file',
    report: runReport('.', run, [{ cell, result }]),
    results: new Map([[cell.path, result]]),
    leaks: runDevices(snapshot).map((d) => leaksOf(snapshot, d)),
  };
  return { subject, explainFragmentation: explainer(subject, async () => snapshot) };
}

function open(p: string, opts: SubjectOptions): Promise<Snapshot> {
  return openSnapshot(p, { progress: opts.progress }).catch((e: unknown) => {
    throw new Error(`${p}: ${e instanceof Error ? e.message : String(e)}`);
  });
}

/** Sets the fragmentation figure's segments and pinning sites, from the model of the file where it is largest. */
function explainer(subject: CheckSubject, snapshotOf: (file: string) => Promise<Snapshot>) {
  return async () => {
    const place = fragmentationPlace(subject);
    if (place === null) {
      subject.fragmentation = null;
      return;
    }
    const snapshot = await snapshotOf(place.file);
    const device = snapshot.devices.find((d) => d.device === place.device);
    subject.fragmentation =
      device === undefined ? null : { place, blame: fragmentationBlame(snapshot, device) };
  };
}

/** A saved baseline (.json holding "memlens_check_baseline"), else a snapshot or run taken as one. */
export async function loadBaseline(p: string, opts: SubjectOptions): Promise<Baseline> {
  const saved = savedBaseline(p);
  if (saved !== null) return saved;
  const { subject } = await loadSubject(p, opts);
  return baselineOf(subject, measure(subject));
}

function savedBaseline(p: string): Baseline | null {
  if (!p.endsWith('.json') || isDirectory(p)) return null;
  // A snapshot saved as JSON (it may be gigabytes) has no such field first: it is read as a snapshot.
  if (!readStart(p).includes('"memlens_check_baseline"')) return null;
  try {
    return parseBaseline(JSON.parse(fs.readFileSync(p, 'utf8')));
  } catch (e) {
    const why = e instanceof BaselineError ? e.message : `not valid JSON (${(e as Error).message})`;
    throw new Error(`${p}: ${why}`);
  }
}

/** The first bytes of a file, where --save-baseline writes its marker field. */
function readStart(p: string): string {
  let fd: number;
  try {
    fd = fs.openSync(p, 'r');
  } catch (e) {
    throw new Error(`${p}: cannot read the baseline (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  try {
    const head = Buffer.alloc(256);
    return head.subarray(0, fs.readSync(fd, head, 0, head.length, 0)).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

export const CONFIG_FILE = 'pyproject.toml';

/**
 * The [tool.memlens.check] table of the nearest pyproject.toml from `dir` upwards (or of `file`),
 * with its directory, for baseline paths relative to it; null when there is none.
 */
export function readConfig(
  file: string | undefined,
  dir = process.cwd(),
): { table: Record<string, unknown>; dir: string } | null {
  const found = file ?? nearest(dir);
  if (found === undefined) return null;
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(fs.readFileSync(found, 'utf8'));
  } catch (e) {
    throw new Error(`${found}: ${(e as Error).message.split('\n')[0]}`);
  }
  const table = (doc.tool as Record<string, Record<string, unknown>> | undefined)?.memlens?.check;
  if (table === undefined) {
    if (file !== undefined) throw new Error(`${found}: has no [tool.memlens.check] table`);
    return null;
  }
  if (typeof table !== 'object' || table === null)
    throw new Error(`${found}: tool.memlens.check is not a table`);
  return { table: table as Record<string, unknown>, dir: path.dirname(found) };
}

function nearest(dir: string): string | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const f = path.join(d, CONFIG_FILE);
    if (fs.existsSync(f)) return f;
    if (path.dirname(d) === d) return undefined;
  }
}
