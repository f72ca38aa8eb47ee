import { useEffect, useState } from 'react';
import type { RunSnapshot } from '../../../../src/engine/analyses/run/index.js';
import { type RunReport, runReport } from '../../../../src/engine/analyses/run/index.js';
import { discoverRun, notSnapshotJson } from '../../../../src/engine/run-layout/index.js';
import type { RunState } from '../../../../src/wire/run-state.js';
import { embeddedRun } from '../../embedded-data.js';
import type { EngineClient } from '../../worker/client.js';
import type { Source } from '../../worker/protocol.js';

/** A run the Run page shows: served by `memlens view DIR`, or files dropped together. */
export interface RunData {
  report: RunReport;
  /** How to open each of the report's snapshots (aligned with report.snapshots). */
  sources: Source[];
  /** The server adds files written later (`memlens view DIR --watch`). */
  watching: boolean;
}

/** How often the page asks a decoding or watched run for news. */
const POLL_MS = 1000;

/** The server's run as the page knows it. */
export interface ServedRunState {
  /** undefined: not asked yet; false: the server serves files, not a run (or the page is not served). */
  hasRun: boolean | undefined;
  data: RunData | null;
  /** Files decoded of those found, while the server decodes. */
  progress: { done: number; total: number } | null;
}

/**
 * The server's run, kept current: asked again while it decodes or watches (`?since=` the version
 * held, so an unchanged run costs a few bytes).
 */
export function useServedRun(): ServedRunState {
  const [state, setState] = useState<ServedRunState>({ hasRun: undefined, data: null, progress: null });
  useEffect(() => {
    const embedded = embeddedRun();
    if (embedded !== null) return setState({ hasRun: true, data: embedded, progress: null });
    if (location.protocol !== 'http:' && location.protocol !== 'https:') {
      setState({ hasRun: false, data: null, progress: null });
      return;
    }
    let live = true;
    let version = -1;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ask = async () => {
      let again = true;
      try {
        const res = await fetch(`api/run${version >= 0 ? `?since=${version}` : ''}`);
        if (!live) return;
        if (res.status === 404) return setState({ hasRun: false, data: null, progress: null });
        const body = (await res.json()) as RunState;
        if (!live) return;
        setState((s) => ({ hasRun: true, data: servedData(body) ?? s.data, progress: body.progress }));
        if (body.report !== null) version = body.version;
        again = body.watching || body.progress !== null || body.report === null;
      } catch {
        // The server is busy or restarting: ask again.
      }
      if (live && again) timer = setTimeout(ask, POLL_MS);
    };
    void ask();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, []);
  return state;
}

function servedData(body: RunState): RunData | null {
  if (body.report === null) return null;
  const sources = body.urls.map((u, i) => ({ url: new URL(u, location.href).href, name: body.names[i]! }));
  return { report: body.report, sources, watching: body.watching };
}

/**
 * Files dropped together on the page as one run: each decoded in the worker (one at a time:
 * the page's memory holds one model at a time) to what a run needs of it, then placed and
 * reported by the engine as `memlens run` does.
 */
export async function droppedRun(
  client: EngineClient,
  files: File[],
  onProgress: (done: number, total: number) => void,
): Promise<RunData> {
  const named = files.map((f) => ({ file: f, path: f.webkitRelativePath || f.name }));
  // Configs and Chrome traces dropped with the snapshots are left out, as `memlens run` leaves them.
  const reasons = await Promise.all(named.map(({ file, path }) => notSnapshotDropped(file, path)));
  const skipped = named.flatMap((n, i) =>
    reasons[i] === null ? [] : [{ path: n.path, reason: reasons[i]! }],
  );
  const kept = named.filter((_, i) => reasons[i] === null);
  const byPath = new Map(kept.map((n) => [n.path, n.file]));
  // A dropped folder's files are named from it (webkitRelativePath): that folder is the run's root.
  const roots = [...new Set(kept.flatMap((n) => (n.path.includes('/') ? [n.path.split('/')[0]!] : [])))];
  const run = discoverRun(
    kept.map((n) => ({ path: n.path, mtimeMs: n.file.lastModified })),
    { skipped, roots, recorded: recordedFolders(named.map((n) => n.path)) },
  );
  const snapshots: RunSnapshot[] = [];
  for (const [i, cell] of run.cells.entries()) {
    onProgress(i, run.cells.length);
    const file = byPath.get(cell.path)!;
    try {
      snapshots.push({ cell, result: await client.query('runCell', { source: { file, name: cell.path } }) });
    } catch (e) {
      snapshots.push({ cell, result: null, error: (e as Error).message });
    }
  }
  const report = runReport('dropped files', run, snapshots);
  // In the report's order: the files may tell a place the names could not (settle-layout.ts).
  const sources = report.snapshots.map((s) => ({ file: byPath.get(s.file)!, name: s.file }));
  return { report, sources, watching: false };
}

/** A plain .json file's head says whether it is a snapshot (gzipped ones are left to the decoder). */
async function notSnapshotDropped(file: File, path: string): Promise<string | null> {
  if (!/\.json$/i.test(path)) return null;
  return notSnapshotJson(path, await file.slice(0, 64 * 1024).text());
}

/** The dropped folders memlens record wrote: those holding its `.memlens/` record, at any depth. */
function recordedFolders(paths: string[]): string[] {
  const folders = paths.flatMap((p) => {
    const at = p.indexOf('/.memlens/');
    return at > 0 ? [p.slice(0, at)] : [];
  });
  return [...new Set(folders)];
}
