import { useEffect, useState } from 'react';
import { formatBytes } from '../format.js';
import { QueryFailed } from '../worker/client.js';
import type { Loaded } from '../worker/protocol.js';

export type LoadState =
  | { status: 'idle' }
  | { status: 'loading'; name: string; bytes: number; total: number | null }
  | { status: 'ready'; name: string; loaded: Loaded; bytes: number; seconds: number }
  | { status: 'error'; name: string; message: string };

/** How long the file took to read, and how much of it the WebAssembly scanner read (on hover). */
function LoadDone({ state }: { state: Extract<LoadState, { status: 'ready' }> }) {
  const { entries, scannedEntries } = state.loaded;
  const share = entries > 0 ? `${((100 * scannedEntries) / entries).toFixed(1)}%` : 'none';
  return (
    <p
      className="hint load-done"
      data-scanned-entries={scannedEntries}
      title={`${scannedEntries.toLocaleString('en-US')} of ${entries.toLocaleString('en-US')} trace entries (${share}) read by the WebAssembly entry scanner; the rest by the JS decoder`}
    >
      {state.name}: {formatBytes(state.bytes)} read in {state.seconds.toFixed(1)} s
    </p>
  );
}

/** What is happening to the file: nothing yet (drop hint), decoding progress, or its one-line error. */
export function LoadStatus({ state, hasFiles }: { state: LoadState; hasFiles: boolean }) {
  if (state.status === 'idle')
    return (
      <p className="hint">
        {hasFiles ? 'Choose a snapshot above, or drop' : 'Drop'} a snapshot file (.pickle, .json, .gz)
        anywhere on this page. It is read here, in your browser; nothing is uploaded.
      </p>
    );
  if (state.status === 'error')
    return (
      <p className="error" role="alert">
        {state.name}: {state.message}
      </p>
    );
  if (state.status === 'ready') return <LoadDone state={state} />;
  const pct = state.total ? Math.min(100, (100 * state.bytes) / state.total) : null;
  return (
    <div className="loading" role="status">
      <span>
        decoding {state.name}: {formatBytes(state.bytes)}
        {state.total ? ` of ${formatBytes(state.total)}` : ''}
      </span>
      <progress max={100} value={pct ?? undefined} />
    </div>
  );
}

/**
 * A query the engine failed that no view handled (a view waiting on it would otherwise say
 * "computing…" forever): one line saying what failed and why, until the next file is opened.
 */
export function WorkerFailure({ file }: { file: string | null }) {
  const [failure, setFailure] = useState<QueryFailed | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new file starts without the old failure
  useEffect(() => setFailure(null), [file]);
  useEffect(() => {
    const unhandled = (e: PromiseRejectionEvent) => {
      if (!(e.reason instanceof QueryFailed)) return;
      e.preventDefault();
      setFailure(e.reason);
    };
    window.addEventListener('unhandledrejection', unhandled);
    return () => window.removeEventListener('unhandledrejection', unhandled);
  }, []);
  if (failure === null) return null;
  return (
    <p className="error worker-failure" role="alert">
      The engine could not answer ({failure.query}): {failure.message.split('\n')[0]}
    </p>
  );
}
