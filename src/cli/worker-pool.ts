import os from 'node:os';
import { Worker } from 'node:worker_threads';

export interface PoolJob<Req> {
  request: Req;
  /** Bytes this job may need at its peak (its file's size is a fair guess: see bench/RESULTS.md). */
  bytes: number;
}

export interface PoolOptions {
  /** Most jobs at once (default: the machine's cores). */
  jobs?: number;
  /** Bytes all running jobs may need together (default: half the free memory). */
  budget?: number;
}

/**
 * Runs one worker thread per job, as many at once as cores and the memory budget allow (one job
 * always runs, however large), and hands each reply over as it arrives, so results show as files
 * finish rather than when the slowest does.
 */
export async function runPool<Req, Reply>(
  script: URL,
  jobs: PoolJob<Req>[],
  onReply: (index: number, reply: Reply | { error: string }) => void,
  opts: PoolOptions = {},
): Promise<void> {
  const limit = Math.max(1, opts.jobs ?? os.availableParallelism());
  const budget = opts.budget ?? os.freemem() / 2;
  let next = 0;
  let running = 0;
  let using = 0;
  await new Promise<void>((resolve) => {
    const launch = () => {
      while (
        next < jobs.length &&
        running < limit &&
        (running === 0 || using + jobs[next]!.bytes <= budget)
      ) {
        const k = next++;
        running++;
        using += jobs[k]!.bytes;
        runWorker<Req, Reply>(script, jobs[k]!.request).then((reply) => {
          running--;
          using -= jobs[k]!.bytes;
          onReply(k, reply);
          launch();
        });
      }
      if (running === 0 && next >= jobs.length) resolve();
    };
    launch();
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
