import { createReadStream, realpathSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { createGzip, gzipSync } from 'node:zlib';
import type { RunReport } from '../../engine/analyses/run/index.js';
import { asSnapshotError, formatBytes, SnapshotError } from '../../engine/base/index.js';
import { openSnapshot } from '../../node/files/open-snapshot.js';
import { fileSize } from '../../node/files/read-file.js';
import { VERSION } from '../../node/version.js';
import { CycleService } from '../../server/cycle-service.js';
import { RunService } from '../../server/run-service.js';
import { collectFiles } from '../../server/snapshot-files.js';
import type { ReportManifest } from '../../wire/report-manifest.js';
import type { ServedCycle } from '../../wire/served-cycle.js';
import type { EmbeddedCycle, EmbeddedSnapshot, ReportContents } from './report-page.js';

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
    cycles: [],
  };
}

/**
 * A run directory: decoded as `memlens view DIR` decodes it (the result cache, worker threads),
 * its Run page's report embedded whole, and its recorded cycles and snapshots while they fit in
 * `maxBytes` gzipped: the cycles first (a few KiB each, and a run recorded without a GPU has
 * nothing else), then the snapshots its findings name (priorities). Each one left out is listed
 * with why, on the page too.
 */
export async function runContents(dir: string, maxBytes: number): Promise<ReportContents> {
  await collectFiles([dir]); // a directory with neither snapshots nor cycle files: its one-line error
  const service = new RunService([dir], [], []);
  await service.start();
  const run = withoutLocalPaths(service.state(), dir);
  const served = withoutLocalPaths(await new CycleService([dir], service.files).state(), dir);
  const over = `gzipped, it would take the report over --max-bytes ${formatBytes(maxBytes)}`;
  const { cycles, omitted } = cyclesWithin(served.cycles, maxBytes, over);
  let left = maxBytes - cycles.reduce((t, c) => t + c.gzipped.length, 0);
  const report = run.report!;
  const rank = priorities(report);
  const order = report.snapshots.map((_, i) => i);
  order.sort(
    (a, b) => (rank.get(report.snapshots[b]!.file) ?? 0) - (rank.get(report.snapshots[a]!.file) ?? 0),
  );
  const embedded: { index: number; snapshot: EmbeddedSnapshot }[] = [];
  for (const i of order) {
    const s = report.snapshots[i]!;
    const file = service.files.find((f) => f.name === run.names[i])!;
    const base = { name: file.name, label: file.label, size: file.size };
    if (s.error !== undefined) {
      omitted.push({ ...base, reason: `could not be read: ${s.error}`, kind: 'snapshot' });
      continue;
    }
    const gzipped = await gzipFile(file.path, left);
    if (gzipped === null) {
      omitted.push({ ...base, reason: over, kind: 'snapshot' });
      continue;
    }
    left -= gzipped.length;
    embedded.push({ index: i, snapshot: { ...base, gzipped } });
  }
  embedded.sort((a, b) => a.index - b.index);
  return {
    manifest: { memlens: VERSION, source: basename(resolve(dir)), run, omitted },
    snapshots: embedded.map((e) => e.snapshot),
    cycles,
  };
}

/** Each recorded cycle's JSON gzipped, while they fit in `budget` together; the rest listed as omitted. */
function cyclesWithin(
  served: ServedCycle[],
  budget: number,
  over: string,
): { cycles: EmbeddedCycle[]; omitted: ReportManifest['omitted'] } {
  const cycles: EmbeddedCycle[] = [];
  const omitted: ReportManifest['omitted'] = [];
  let left = budget;
  for (const c of served) {
    const json = Buffer.from(JSON.stringify(c), 'utf8');
    const gzipped = gzipSync(json, { level: 6 });
    if (gzipped.length > left) {
      omitted.push({ name: c.name, label: '', size: json.length, reason: over, kind: 'cycle' });
      continue;
    }
    left -= gzipped.length;
    cycles.push({ name: c.name, size: json.length, gzipped });
  }
  return { cycles, omitted };
}

/**
 * The run's report and its cycles name files by the paths they were read from, which may say
 * where on this machine the run lives (/home/alice/…): in a page meant to be shared, each becomes
 * its path from the run directory's own name (`run/step3/…`, the name the page lists it by).
 * The directory as given, absolute and resolved (the cycles' windows are real paths).
 */
function withoutLocalPaths<T>(value: T, dir: string): T {
  const name = basename(resolve(dir));
  const roots = [...new Set([dir, resolve(dir), realpathSync(dir)].map((d) => d.replace(/[\\/]+$/, '')))];
  return JSON.parse(JSON.stringify(value), (_key, v: unknown) => {
    if (typeof v !== 'string') return v;
    for (const root of roots) {
      if (v === root) return name;
      if (v.startsWith(root + sep)) return join(name, v.slice(root.length + 1));
    }
    return v;
  }) as T;
}

/**
 * Which snapshots a run's report most needs, when not all fit: OOM dumps (2), then the cells the
 * findings open and compare with (1): each outlier's first window on its lane and on the lane it
 * is compared with (run-table.ts). The rest (0) follow in run order.
 */
function priorities(report: RunReport): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of report.outliers)
    for (const row of report.rows)
      if (row.steps?.first === o.steps.first && (row.lane === o.lane || row.lane_label === o.against_lane))
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
