import { embeddedPort } from '../embedded-data.js';
import EngineWorker from './engine-worker.ts?worker&inline';
import type { PartialOf, Queries, QueryName, Request, Response, Source } from './protocol.js';

export type Progress = (bytes: number, total: number | null) => void;

/** A query the engine could not answer: the worker threw, or the worker itself stopped. */
export class QueryFailed extends Error {
  constructor(
    readonly query: string,
    message: string,
  ) {
    super(message);
    this.name = 'QueryFailed';
  }
}

/**
 * The page's handle on the engine worker: each query is a promise; load progress arrives on the
 * side. The worker is inlined as a blob so the app also runs from file://. Every query settles:
 * with the worker's answer, its error, or (when the worker itself fails) the reason it stopped.
 */
export class EngineClient {
  private readonly worker: Worker = new EngineWorker();
  private nextId = 1;
  private stopped: string | null = null;
  private readonly pending = new Map<
    number,
    {
      query: string;
      resolve: (v: unknown) => void;
      reject: (e: Error) => void;
      progress?: Progress;
      partial?: (v: unknown) => void;
    }
  >();

  constructor() {
    this.worker.onmessage = (e: MessageEvent<Response>) => this.receive(e.data);
    // An error the worker did not catch, or a reply that cannot be read: without these, the
    // queries waiting on it would never settle and their views would say "computing…" forever.
    this.worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      this.failAll(`the engine worker stopped: ${e.message || 'an error it did not report'}`);
    };
    this.worker.onmessageerror = () => this.failAll('a reply from the engine worker could not be read');
    // For the end-to-end tests (and the console): the page's one engine.
    (globalThis as { memlensEngine?: EngineClient }).memlensEngine = this;
  }

  query<K extends QueryName>(
    query: K,
    args: Queries[K]['args'],
    progress?: Progress,
    partial?: (soFar: PartialOf<K>) => void,
  ): Promise<Queries[K]['result']> {
    if (this.stopped !== null) return Promise.reject(new QueryFailed(query, this.stopped));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onPartial = partial as ((v: unknown) => void) | undefined;
      this.pending.set(id, {
        query,
        resolve: resolve as (v: unknown) => void,
        reject,
        progress,
        partial: onPartial,
      });
      const { sent, transfer } = wireArgs(args);
      this.worker.postMessage({ id, query, args: sent } as Request, transfer);
    });
  }

  private receive(msg: Response): void {
    const p = this.pending.get(msg.id);
    if (p === undefined) return;
    if ('progress' in msg) {
      p.progress?.(msg.progress.bytes, msg.progress.total);
      return;
    }
    if ('partial' in msg) {
      p.partial?.(msg.partial);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new QueryFailed(p.query, msg.error));
  }

  private failAll(reason: string): void {
    this.stopped = reason;
    for (const p of this.pending.values()) p.reject(new QueryFailed(p.query, reason));
    this.pending.clear();
  }
}

/**
 * A query's arguments as the worker takes them: an embedded snapshot (a source naming a report
 * page's data elements) goes as a port that sends their text as the page's parser reaches them,
 * moved to the worker (each query gets its own).
 */
function wireArgs<A>(args: A): { sent: A; transfer: Transferable[] } {
  const transfer: Transferable[] = [];
  const sent = Object.fromEntries(
    Object.entries(args as object).map(([k, v]) => {
      if (!isEmbedded(v)) return [k, v];
      const text = embeddedPort(v.embedded);
      const again = embeddedPort(v.embedded);
      transfer.push(text, again);
      return [k, { text, again, name: v.name, size: v.size } satisfies Source];
    }),
  ) as A;
  return { sent, transfer };
}

function isEmbedded(v: unknown): v is Extract<Source, { embedded: string[] }> {
  return typeof v === 'object' && v !== null && 'embedded' in v && Array.isArray(v.embedded);
}
