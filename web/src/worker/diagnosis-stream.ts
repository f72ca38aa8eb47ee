import type { DiagnosisSoFar } from '../../../src/engine/analyses/diagnosis/index.js';

/** Sends a query's partial answer to the page (a `partial` message on the query's id). */
export type PostPartial = (id: number, partial: DiagnosisSoFar) => void;

/** For the end-to-end tests: hold each step `ms` longer while the named analysis is still pending. */
export interface DiagnosisPace {
  pending: string;
  ms: number;
}

interface Running {
  /** The snapshot diagnosed, and the query's arguments. */
  owner: object;
  key: string;
  heard: Heard;
  done: Promise<DiagnosisSoFar>;
}

/** The last answer so far, and the queries waiting on the next. */
interface Heard {
  latest: DiagnosisSoFar | undefined;
  listeners: Set<(soFar: DiagnosisSoFar) => void>;
}

/**
 * The file's diagnosis, one analysis at a time: after each, what is known so far goes to every
 * query waiting on it, and the worker takes its other messages (the first timeline) before the
 * next. Queries asking the same (landing, Diagnosis tab) share one run, and its answer is kept.
 */
export function diagnosisStream(post: PostPartial) {
  let running: Running | undefined;
  let pace: DiagnosisPace | null = null;

  const walk = async (
    heard: Heard,
    steps: Iterable<DiagnosisSoFar>,
    stillOpen: () => boolean,
  ): Promise<DiagnosisSoFar> => {
    for (const soFar of steps) {
      heard.latest = soFar;
      for (const send of heard.listeners) send(soFar);
      if (soFar.pending.length === 0) return soFar;
      await nextTask(pace !== null && soFar.pending.includes(pace.pending) ? pace.ms : 0);
      if (!stillOpen()) throw new Error('the file was closed before its diagnosis finished');
    }
    throw new Error('the diagnosis ended without an answer');
  };

  return {
    /**
     * Answers query `id` with the diagnosis of `owner` for `key`, started with `steps()` unless
     * already under way; id null: only starts it (a query asking the same later joins it).
     */
    answer(
      id: number | null,
      owner: object,
      key: string,
      steps: () => Iterable<DiagnosisSoFar>,
      stillOpen: () => boolean,
    ): Promise<DiagnosisSoFar> {
      if (running?.owner !== owner || running.key !== key) {
        const heard: Heard = { latest: undefined, listeners: new Set() };
        running = { owner, key, heard, done: walk(heard, steps(), stillOpen) };
      }
      const { heard, done } = running;
      if (id === null) return done;
      if (heard.latest !== undefined && heard.latest.pending.length > 0) post(id, heard.latest);
      const send = (soFar: DiagnosisSoFar) => post(id, soFar);
      heard.listeners.add(send);
      return done.finally(() => heard.listeners.delete(send));
    },
    setPace(p: DiagnosisPace | null): null {
      pace = p;
      return null;
    },
  };
}

/** Lets the worker's queued messages run before the next analysis. */
function nextTask(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
