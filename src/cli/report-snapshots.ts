import { createReadStream } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { createGzip } from 'node:zlib';
import type { RunReport } from '../engine/analyses/run/run-report.js';
import { asSnapshotError, SnapshotError } from '../engine/errors.js';
import { formatBytes } from '../engine/format.js';
import { RunService } from '../server/run-service.js';
import type { RunState } from '../server/run-state.js';
import { collectFiles } from '../server/snapshot-files.js';
import { openSnapshot } from './open-snapshot.js';
import { fileSize } from './read-file.js';
import type { ReportManifest } from './report-manifest.js';
import type { EmbeddedSnapshot } from './report-page.js';
import { VERSION } from './version.js';

/** What a report carries: the manifest (less the file list) and the snapshots' gzipped bytes. */
export interface ReportContents {
  manifest: Omit<ReportManifest, 'files'>;
  snapshots: EmbeddedSnapshot[];
}

/**
 * One snapshot file: decoded here first (so a file that is not a snapshot is a one-line error,
 * not a page that says so), while gzip compresses it on libuv's threads. It must fit in
 * `maxBytes` gzipped, else the report is refused: nothing is ever cut silently.
 */
export async function fileContents(path: string, maxBytes: number): Promise<ReportContents> {
  let size: number;
  let gzipped: Uint8Array | null;
  try {
    size = await fileSize(path);
    // A progress bar (on a terminal, for a large file) follows the decode.
    [, gzipped] = await Promise.all([openSnapshot(path, { progress: true }), gzipFile(path, maxBytes)]);
  } catch (e) {
    throw new SnapshotError(`${path}: ${asSnapshotError(e).message}`);
  }
  if (gzipped === null)
    throw new SnapshotError(
      `${path}: gzipped it is over --max-bytes ${formatBytes(maxBytes)}: raise --max-bytes, or cut a window with memlens slice`,
    );
  const name = basename(path);
  return {
    manifest: { memlens: VERSION, source: name, run: null, omitted: [] },
    snapshots: [{ name, label: '', size, gzipped }],
  };
}

/**
 * A run directory: decoded as `memlens view DIR` decodes it (the result cache, worker threads),
 * its Run page's report embedded whole, and its snapshots while they fit in `maxBytes` gzipped,
 * the ones its findings name first (priorities). Each one left out is listed with why, on the page too.
 */
export async function runContents(dir: string, maxBytes: number): Promise<ReportContents> {
  await collectFiles([dir]); // a directory without snapshots: its one-line error
  const service = new RunService([dir], [], []);
  await service.start();
  const run = withoutLocalPaths(service.state(), dir);
  const report = run.report!;
  const rank = priorities(report);
  const order = report.snapshots.map((_, i) => i);
  order.sort(
    (a, b) => (rank.get(report.snapshots[b]!.file) ?? 0) - (rank.get(report.snapshots[a]!.file) ?? 0),
  );
  const embedded: { index: number; snapshot: EmbeddedSnapshot }[] = [];
  const omitted: ReportManifest['omitted'] = [];
  let left = maxBytes;
  for (const i of order) {
    const s = report.snapshots[i]!;
    const served = service.files.find((f) => f.name === run.names[i])!;
    const base = { name: served.name, label: served.label, size: served.size };
    if (s.error !== undefined) {
      omitted.push({ ...base, reason: `could not be read: ${s.error}` });
      continue;
    }
    const gzipped = await gzipFile(served.path, left);
    if (gzipped === null) {
      omitted.push({
        ...base,
        reason: `gzipped, it would take the report over --max-bytes ${formatBytes(maxBytes)}`,
      });
      continue;
    }
    left -= gzipped.length;
    embedded.push({ index: i, snapshot: { ...base, gzipped } });
  }
  embedded.sort((a, b) => a.index - b.index);
  return {
    manifest: { memlens: VERSION, source: basename(resolve(dir)), run, omitted },
    snapshots: embedded.map((e) => e.snapshot),
  };
}

/**
 * The run's report names its files by the paths they were read from, which may say where on this
 * machine the run lives (/home/alice/…): in a page meant to be shared, each becomes its path from
 * the run directory's own name (`run/step3/…`, the name the page lists it by).
 */
function withoutLocalPaths(run: RunState, dir: string): RunState {
  const name = basename(resolve(dir));
  const prefix = dir.endsWith(sep) ? dir : dir + sep;
  return JSON.parse(JSON.stringify(run), (_key, v: unknown) => {
    if (typeof v !== 'string') return v;
    if (v === dir) return name;
    return v.startsWith(prefix) ? join(name, v.slice(prefix.length)) : v;
  }) as RunState;
}

/**
 * Which snapshots a run's report most needs, when not all fit: OOM dumps (2), then the cells the
 * findings open and compare with (1): each outlier's first window on its rank and on the rank it
 * is compared with. The rest (0) follow in run order.
 */
function priorities(report: RunReport): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of report.outliers)
    for (const row of report.rows)
      if (row.steps?.first === o.steps.first && (row.rank === o.rank || row.rank === o.against_rank))
        out.set(row.file, 1);
  for (const o of report.ooms) out.set(o.file, 2);
  return out;
}

/**
 * The file's bytes gzipped (as they are, when the file already is gzip), or null as soon as
 * they pass `limit`: a file over the budget is never compressed to the end. Level 6: on the
 * 100 MB synthetic file level 9 took 3x as long (4.1 s vs 1.4 s) for 3% fewer bytes.
 */
export async function gzipFile(path: string, limit: number): Promise<Uint8Array | null> {
  const head = await firstBytes(path, 2);
  const gzip = head[0] === 0x1f && head[1] === 0x8b;
  const input = createReadStream(path);
  const stream = gzip ? input : input.pipe(createGzip({ level: 6 }));
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) return null;
      chunks.push(chunk);
    }
  } finally {
    input.destroy();
    if (stream !== input) stream.destroy();
  }
  return Buffer.concat(chunks, total);
}

async function firstBytes(path: string, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of createReadStream(path, { start: 0, end: n - 1 })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
