import EngineWorker from './engine-worker.ts?worker&inline';
import type { Queries, QueryName, Request, Response } from './protocol.js';

export type Progress = (bytes: number, total: number | null) => void;

/**
 * The page's handle on the engine worker: each query is a promise; load progress arrives on the
 * side. The worker is inlined as a blob so the app also runs from file://.
 */
export class EngineClient {
  private readonly worker: Worker = new EngineWorker();
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; progress?: Progress }
  >();

  constructor() {
    this.worker.onmessage = (e: MessageEvent<Response>) => this.receive(e.data);
  }

  query<K extends QueryName>(
    query: K,
    args: Queries[K]['args'],
    progress?: Progress,
  ): Promise<Queries[K]['result']> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, progress });
      this.worker.postMessage({ id, query, args } as Request);
    });
  }

  private receive(msg: Response): void {
    const p = this.pending.get(msg.id);
    if (p === undefined) return;
    if ('progress' in msg) {
      p.progress?.(msg.progress.bytes, msg.progress.total);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new Error(msg.error));
  }
}
