import { omittedReason } from './embedded-data.js';
import { type ServedFile, sourceOf } from './served-files.js';
import { readUrlState, type ViewState } from './url-state.js';
import { windowCyclesOf } from './views/cycles/cycles-page.js';
import { diagnosisArgs } from './views/diagnosis/diagnosis-page.js';
import type { EngineClient, Progress } from './worker/client.js';
import type { Loaded, Source } from './worker/protocol.js';

/** The file a page opens from its list: the one its URL names (with the rest of its state), or the only one. */
export function fileToOpen(
  list: ServedFile[],
  initial: ViewState,
): { file: ServedFile; keep: Partial<ViewState> } | null {
  const named = list.find((f) => f.name === initial.file) ?? (list.length === 1 ? list[0] : undefined);
  if (named === undefined) return null;
  return { file: named, keep: named.name === initial.file ? initial : {} };
}

/** What the worker is asked with to load `source`: landing on the Diagnosis, it starts it when the load ends. */
export function loadArgs(
  source: Source,
  tab: ViewState['tab'],
  cycles: Parameters<typeof windowCyclesOf>[0],
) {
  return tab === 'diagnosis'
    ? { source, diagnose: diagnosisArgs(source.name, windowCyclesOf(cycles, source.name)) }
    : { source };
}

/** A load asked before the app was drawn, for the app to take over (once) when it opens that file. */
export interface EarlyLoad {
  name: string;
  /** The answer, with the load's progress sent to `progress` from now on (the latest first). */
  follow(progress: Progress): Promise<Loaded>;
}

/**
 * The page's first file, asked of the worker as soon as the file list is in: React's first render
 * and its effects came first and put 50-130 ms between the list and the query (1 GB trace, served).
 * The app's first render reads the URL the same way and knows no cycles yet, so it would ask the same.
 */
export async function earlyLoad(
  client: EngineClient,
  files: Promise<ServedFile[]>,
): Promise<EarlyLoad | null> {
  const initial = readUrlState();
  const chosen = fileToOpen(await files, initial);
  if (chosen === null || omittedReason(chosen.file.name) !== null) return null;
  const source = sourceOf(chosen.file);
  let latest: [number, number | null] | null = null;
  let listener: Progress | null = null;
  const loaded = client.query(
    'load',
    loadArgs(source, chosen.keep.tab ?? initial.tab, null),
    (bytes, total) => {
      latest = [bytes, total];
      listener?.(bytes, total);
    },
  );
  // Failed before the app takes it over: its error is the app's to show then, not an unhandled one now.
  loaded.catch(() => {});
  return {
    name: source.name,
    follow(progress) {
      listener = progress;
      if (latest !== null) progress(...latest);
      return loaded;
    },
  };
}
