import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Producer } from '../../src/engine/model/index.js';
import { omittedReason } from './embedded-data.js';
import { EmbeddedNotice } from './embedded-notice.js';
import { type EarlyLoad, fileToOpen, loadArgs } from './first-load.js';
import { type ServedFile, sourceOf } from './served-files.js';
import { readUrlState, type Tab, type ViewState, writeUrlState } from './url-state.js';
import { AnalysesPage } from './views/analyses-page.js';
import { CyclesPage, useServedCycles, windowCyclesOf } from './views/cycles/cycles-page.js';
import { DiagnosisPage } from './views/diagnosis/diagnosis-page.js';
import { deviceNames, landingDevice, useFileDiagnosis } from './views/diagnosis/use-file-diagnosis.js';
import { FileBar } from './views/file-bar.js';
import { FlamePage } from './views/flame-page.js';
import { type LoadState, LoadStatus, WorkerFailure } from './views/load-status.js';
import { Overview } from './views/overview.js';
import { ProducerWords } from './views/producer-words.js';
import { droppedRun, type RunData, useServedRun } from './views/run/run-data.js';
import { RunPage } from './views/run/run-page.js';
import { TableView } from './views/table-view.js';
import { TimelinePage } from './views/timeline-page.js';
import type { EngineClient } from './worker/client.js';
import type { Source } from './worker/protocol.js';

/**
 * The page: which file is open (served by `memlens view`, or dropped onto the page), its load
 * state, and the view state that lives in the URL. Every view reads the model through the worker.
 */
export function App({
  client,
  files: listed,
  early,
}: {
  client: EngineClient;
  files: Promise<ServedFile[]>;
  early: Promise<EarlyLoad | null>;
}) {
  const [view, setView] = useState<ViewState>(() => readUrlState());
  const [files, setFiles] = useState<ServedFile[]>([]);
  const [load, setLoad] = useState<LoadState>({ status: 'idle' });
  const loadSeq = useRef(0);
  const served = useServedRun();
  const cycles = useServedCycles(served.hasRun);
  const fileCycles = useMemo(() => windowCyclesOf(cycles, view.file), [cycles, view.file]);
  const [dropped, setDropped] = useState<RunData | null>(null);
  const [dropProgress, setDropProgress] = useState<{ done: number; total: number } | null>(null);
  const run = dropped ?? served.data;
  const initialHash = useRef(location.hash);
  const earlyLoad = useRef(early);
  /** The early load, once: a later open (another file, or this one again) asks the worker itself. */
  const takeEarly = useCallback(() => {
    const asked = earlyLoad.current;
    earlyLoad.current = Promise.resolve(null);
    return asked;
  }, []);
  // What a file opened now lands on (open reads it without being made anew on each change).
  const landing = useRef({ tab: view.tab, cycles });
  landing.current = { tab: view.tab, cycles };

  const update = useCallback((patch: Partial<ViewState>) => setView((v) => ({ ...v, ...patch })), []);
  useEffect(() => writeUrlState(view), [view]);

  const open = useCallback(
    async (source: Source, keep: Partial<ViewState> = {}) => {
      const seq = ++loadSeq.current;
      const started = performance.now();
      const omitted = omittedReason(source.name);
      if (omitted !== null) return setLoad({ status: 'error', name: source.name, message: omitted });
      let read = 0;
      setLoad({
        status: 'loading',
        name: source.name,
        bytes: 0,
        total: 'file' in source ? source.file.size : 'embedded' in source ? source.size : null,
      });
      setView((v) => ({
        ...v,
        file: source.name,
        device: null,
        entry: null,
        alloc: null,
        window: null,
        ...keep,
      }));
      const onProgress = (bytes: number, total: number | null) => {
        read = bytes;
        if (seq === loadSeq.current) setLoad({ status: 'loading', name: source.name, bytes, total });
      };
      try {
        // The page's first file was asked for before the app was drawn: taken over, not asked again.
        const asked = await takeEarly();
        // Landing on the Diagnosis: the worker starts it as soon as the file is in, with the
        // arguments the page will ask it with (so the page's query joins it).
        const loaded = await (asked?.name === source.name
          ? asked.follow(onProgress)
          : client.query(
              'load',
              loadArgs(source, keep.tab ?? landing.current.tab, landing.current.cycles),
              onProgress,
            ));
        if (seq !== loadSeq.current) return;
        const seconds = (performance.now() - started) / 1000;
        // A report's snapshot is held gzipped: its size is the file's, as when that file is dropped.
        const bytes =
          'embedded' in source ? source.size : Math.max(read, 'file' in source ? source.file.size : 0);
        setLoad({ status: 'ready', name: source.name, loaded, bytes, seconds });
        // A file of several devices opens on the device of its worst finding (useLanding, below).
        setView((v) => ({
          ...v,
          device: loaded.devices.some((d) => d.device === v.device)
            ? v.device
            : loaded.devices.length === 1
              ? loaded.devices[0]!.device
              : null,
        }));
      } catch (e) {
        if (seq === loadSeq.current)
          setLoad({ status: 'error', name: source.name, message: (e as Error).message });
      }
    },
    [client, takeEarly],
  );

  // Served files: open the one the URL names (restoring the rest of its state), or the only one.
  useEffect(() => {
    listed.then((list) => {
      setFiles(list);
      const chosen = fileToOpen(list, readUrlState());
      if (chosen !== null) open(sourceOf(chosen.file), chosen.keep);
    });
  }, [listed, open]);

  // A run lands on its Run page unless the link names a tab.
  useEffect(() => {
    if (served.hasRun && !/[#&]tab=/.test(initialHash.current)) update({ tab: 'run' });
  }, [served.hasRun, update]);
  // A run of cycles alone (recorded without a GPU) lands on its Cycles tab.
  const cyclesOnly = served.data?.report.snapshots.length === 0 && (cycles?.length ?? 0) > 0;
  useEffect(() => {
    if (cyclesOnly && !/[#&]tab=/.test(initialHash.current)) update({ tab: 'cycles' });
  }, [cyclesOnly, update]);

  useDropAnywhere((dropped) => {
    if (dropped.length === 1) return open({ file: dropped[0]!, name: dropped[0]!.name });
    // Several files dropped together are a run: decoded one by one here, then its Run page.
    update({ tab: 'run', compare: null });
    setDropProgress({ done: 0, total: dropped.length });
    droppedRun(client, dropped, (done, total) => setDropProgress({ done, total })).then((r) => {
      setDropped(r);
      setDropProgress(null);
    });
  });
  useHashChange(view.file, files, open, setView);

  const ready = load.status === 'ready' ? load.loaded : null;
  const device = ready?.devices.find((d) => d.device === view.device) ?? null;
  const several = (ready?.devices.length ?? 0) > 1;
  const fileDiagnosis = useFileDiagnosis(client, several ? view.file : null, fileCycles);
  useEffect(() => {
    if (!ready || view.device !== null || fileDiagnosis === null || fileDiagnosis.file !== view.file) return;
    const device = landingDevice(
      fileDiagnosis.result,
      ready.devices.map((d) => d.device),
    );
    if (device !== undefined) update({ device });
  }, [ready, view.device, view.file, fileDiagnosis, update]);
  const setTab = (tab: Tab) => update({ tab });
  const deviceOfSnapshot = (i: number): number | null =>
    run?.report.rows.find((r) => r.file === run.report.snapshots[i]?.file)?.device ?? null;
  const openSnapshot = (i: number) => {
    const source = run?.sources[i];
    if (source) open(source, { tab: 'diagnosis', compare: null, device: deviceOfSnapshot(i) });
  };
  const compareCells = (a: number, b: number) => {
    const [sa, sb] = [run?.sources[a], run?.sources[b]];
    if (!sa || !sb) return;
    if (ready && view.file === sa.name) update({ tab: 'run', compare: sb.name });
    else open(sa, { tab: 'run', compare: sb.name, device: deviceOfSnapshot(a) });
  };
  const onRunTab = view.tab === 'run';
  const onCyclesTab = view.tab === 'cycles';
  // A cycle's tensor opens its window's snapshot on the allocation or the burst (the open file just takes the view).
  const openCycleLink = (name: string, patch: Partial<ViewState>) => {
    const f = files.find((x) => x.name === name);
    if (ready && view.file === name) update(patch);
    else if (f) open(sourceOf(f), patch);
    // A report left that snapshot out: open says why.
    else if (omittedReason(name) !== null) open({ file: new File([], name), name }, patch);
  };

  return (
    <ProducerWords value={ready?.producer ?? PYTORCH}>
      <div className="app">
        <FileBar
          files={files}
          current={view.file}
          devices={ready?.devices ?? []}
          deviceNames={fileDiagnosis?.result ? deviceNames(fileDiagnosis.result) : undefined}
          device={view.device}
          tab={view.tab}
          // From the Run page, a file chosen in the list opens on its own page.
          onOpenServed={(f) => open(sourceOf(f), onRunTab ? { tab: 'diagnosis', compare: null } : {})}
          onOpenLocal={(file) => open({ file, name: file.name })}
          onDevice={(d) => update({ device: d, entry: null, alloc: null, window: null })}
          onTab={setTab}
          cycles={(cycles?.length ?? 0) > 0}
        />
        {run && !onRunTab && (
          <nav className="run-back" aria-label="run">
            <button type="button" className="link" onClick={() => update({ tab: 'run', compare: null })}>
              ← back to the run
            </button>{' '}
            {files.find((f) => f.name === view.file)?.label ?? view.file}
          </nav>
        )}
        {((!onRunTab && !onCyclesTab) || load.status === 'loading' || load.status === 'error') && (
          <LoadStatus state={load} hasFiles={files.length > 0} />
        )}
        <WorkerFailure file={view.file} />
        {ready && several && view.device === null && <p className="hint">diagnosing every device…</p>}
        <EmbeddedNotice />
        {onRunTab && (
          <RunPage
            client={client}
            data={run}
            progress={dropProgress ?? served.progress}
            view={view}
            update={update}
            onOpen={openSnapshot}
            onCompare={compareCells}
            loaded={ready && device && view.file ? { file: view.file, device: device.device } : null}
          />
        )}
        {onCyclesTab && <CyclesPage cycles={cycles} openIn={openCycleLink} />}
        {ready && device && view.tab === 'diagnosis' && (
          <DiagnosisPage
            client={client}
            device={device.device}
            label={device.label}
            file={view.file ?? ''}
            update={update}
            cycles={fileCycles}
          />
        )}
        {ready && device && view.tab === 'overview' && <Overview client={client} device={device.device} />}
        {ready && device && view.tab === 'timeline' && (
          // One per file and device: its live window, layers and markers belong to that trace.
          <TimelinePage
            key={`${view.file}:${device.device}`}
            client={client}
            device={device}
            view={view}
            update={update}
          />
        )}
        {ready && device && view.tab === 'flame' && (
          <FlamePage client={client} device={device} view={view} update={update} />
        )}
        {ready && device && view.tab === 'analyses' && (
          <AnalysesPage client={client} device={device} view={view} update={update} cycles={fileCycles} />
        )}
        {ready && device && (view.tab === 'events' || view.tab === 'blocks') && (
          <TableView
            key={view.tab}
            client={client}
            device={device}
            kind={view.tab}
            view={view}
            update={update}
          />
        )}
      </div>
    </ProducerWords>
  );
}

/** Until a file is open, the page speaks of PyTorch on CUDA. */
const PYTORCH: Producer = { kind: 'pytorch', signals: [] };

/**
 * A link pasted into this tab (only the hash changes, so the page does not reload) restores its
 * view: another served file is opened with the link's state, the same file just takes it.
 * The app's own URL writes use replaceState, which fires no hashchange.
 */
function useHashChange(
  file: string | null,
  files: ServedFile[],
  open: (source: Source, keep: Partial<ViewState>) => void,
  setView: (f: (v: ViewState) => ViewState) => void,
): void {
  const latest = useRef({ file, files, open });
  latest.current = { file, files, open };
  useEffect(() => {
    const onHash = () => {
      const next = readUrlState();
      const { file, files, open } = latest.current;
      const served = files.find((f) => f.name === next.file);
      if (served !== undefined && next.file !== file) open(sourceOf(served), next);
      else setView((v) => ({ ...next, file: v.file, device: next.device ?? v.device }));
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [setView]);
}

/** A snapshot file dropped anywhere on the page opens it (the page itself must not navigate to it). */
function useDropAnywhere(onFiles: (f: File[]) => void): void {
  const latest = useRef(onFiles);
  latest.current = onFiles;
  useEffect(() => {
    const over = (e: DragEvent) => e.preventDefault();
    const drop = (e: DragEvent) => {
      e.preventDefault();
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length > 0) latest.current(files);
    };
    window.addEventListener('dragover', over);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragover', over);
      window.removeEventListener('drop', drop);
    };
  }, []);
}
