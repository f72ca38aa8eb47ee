import os from 'node:os';
import { Worker } from 'node:worker_threads';

export interface PoolBatch<Req> {
  requests: Req[];
  /** Bytes its largest request may need at its peak (a file's size is a fair guess: bench/RESULTS.md). */
  bytes: number;
}

export interface PoolOptions {
  /** Worker threads (default: the machine's cores). */
  jobs?: number;
  /** Bytes all running batches may need together (default: half the free memory). */
  budget?: number;
}

/** What a pool worker is sent, and posts back once the batch is done (one reply per request). */
export interface PoolMessage<T> {
  batch: number;
  items: T[];
}

/** A worker thread, or the calling thread itself (PoolOptions.local): takes one batch at a time. */
interface Slot<Req> {
  take(batch: number, items: Req[]): void;
}

/**
 * A fixed pool of worker threads (as many as cores, at least one) fed batches from a queue: a
 * thread starts once, not per file, and small files travel together. With `local`, the calling
 * thread is one of the pool (one thread fewer to start and warm up) and takes the first batch.
 * Batches are taken in order (give them largest first). A batch starts when a slot
 * is free and the memory budget allows it (one always runs, however large); each batch's
 * replies are handed over as they arrive. A thread that dies fails its batch, and another takes
 * its place for the rest.
 */
export async function runPool<Req, Reply>(
  script: URL,
  workerData: unknown,
  batches: PoolBatch<Req>[],
  onReplies: (batch: number, replies: (Reply | { error: string })[]) => void,
  opts: PoolOptions & { local?: (items: Req[]) => Promise<Reply[]> } = {},
): Promise<void> {
  if (batches.length === 0) return;
  const size = Math.min(batches.length, Math.max(1, opts.jobs ?? os.availableParallelism()));
  const budget = opts.budget ?? os.freemem() / 2;
  const busy = new Map<Slot<Req>, number>();
  const idle: Slot<Req>[] = [];
  let next = 0;
  let using = 0;
  let finished = false;
  const workers: Worker[] = [];
  await new Promise<void>((resolve) => {
    const settle = (slot: Slot<Req>, replies: (Reply | { error: string })[]) => {
      const k = busy.get(slot);
      if (k === undefined) return;
      busy.delete(slot);
      using -= batches[k]!.bytes;
      onReplies(k, replies);
    };
    const freed = (slot: Slot<Req>, replies: (Reply | { error: string })[]) => {
      settle(slot, replies);
      idle.push(slot);
      pump();
    };
    const dead = new Set<Slot<Req>>();
    const lost = (slot: Slot<Req>, why: string) => {
      if (finished || dead.has(slot)) return;
      dead.add(slot);
      const k = busy.get(slot);
      if (k !== undefined)
        settle(
          slot,
          batches[k]!.requests.map(() => ({ error: why })),
        );
      else idle.splice(idle.indexOf(slot), 1);
      if (next < batches.length) start();
      pump();
    };
    const start = () => {
      const worker = new Worker(script, { workerData });
      workers.push(worker);
      const slot: Slot<Req> = {
        take: (batch, items) => worker.postMessage({ batch, items } satisfies PoolMessage<Req>),
      };
      worker.on('message', (m: PoolMessage<Reply>) => freed(slot, m.items));
      worker.on('error', (e) => lost(slot, `could not be read: ${e.message.split('\n')[0]}`));
      worker.on('exit', (code) =>
        lost(slot, `could not be read (the decoding thread exited with code ${code})`),
      );
      idle.push(slot);
    };
    const pump = () => {
      while (
        idle.length > 0 &&
        next < batches.length &&
        (busy.size === 0 || using + batches[next]!.bytes <= budget)
      ) {
        const slot = idle.pop()!;
        const k = next++;
        busy.set(slot, k);
        using += batches[k]!.bytes;
        slot.take(k, batches[k]!.requests);
      }
      if (busy.size === 0 && next >= batches.length && !finished) {
        finished = true;
        for (const w of workers) void w.terminate();
        resolve();
      }
    };
    const local = opts.local;
    for (let i = local === undefined ? 0 : 1; i < size; i++) start();
    if (local !== undefined) {
      const slot: Slot<Req> = {
        take: (_batch, items) =>
          void local(items).then(
            (replies) => freed(slot, replies),
            (e: unknown) =>
              freed(
                slot,
                items.map(() => ({ error: `could not be read: ${String(e)}` })),
              ),
          ),
      };
      // Last in, so first out: the first (largest) batch goes to the thread that is already
      // running while the others start.
      idle.push(slot);
    }
    pump();
  });
}

/**
 * One worker thread for one request: resolves with its reply (or why it failed) and ends the
 * thread at once, freeing its model's memory. Messages `interim` accepts (progress) do not end it.
 */
export function runWorker<Req, Reply>(
  script: URL,
  request: Req,
  interim: (message: unknown) => boolean = () => false,
): Promise<Reply | { error: string }> {
  return new Promise((resolve) => {
    const worker = new Worker(script, { workerData: request });
    let done = false;
    const finish = (reply: Reply | { error: string }) => {
      if (done) return;
      done = true;
      void worker.terminate();
      resolve(reply);
    };
    worker.on('message', (message: unknown) => {
      if (!interim(message)) finish(message as Reply);
    });
    worker.on('error', (e) => finish({ error: `could not be read: ${e.message.split('\n')[0]}` }));
    worker.on('exit', (code) =>
      finish({ error: `could not be read (the decoding thread exited with code ${code})` }),
    );
  });
}
