/**
 * runPool: a fixed number of threads, however many batches (a thread per file made 200 small
 * files take 42 s), every reply handed back, and a thread that dies fails only its own batch.
 */
import { describe, expect, it } from 'vitest';
import { runPool } from '../../src/node/workers/worker-pool.js';

/** Replies with its thread id per request; exits (like a crash) on a request 'die'. */
const SCRIPT = new URL(
  `data:text/javascript,${encodeURIComponent(`
import { parentPort, threadId } from 'node:worker_threads';
parentPort.on('message', ({ batch, items }) => {
  if (items.includes('die')) process.exit(7);
  parentPort.postMessage({ batch, items: items.map(() => threadId) });
});`)}`,
);

async function pool(batches: string[][], jobs: number, local?: (items: string[]) => Promise<number[]>) {
  const replies = new Map<string, unknown>();
  await runPool<string, number>(
    SCRIPT,
    null,
    batches.map((requests) => ({ requests, bytes: 1 })),
    (k, items) => {
      for (const [i, r] of items.entries()) replies.set(batches[k]![i]!, r);
    },
    { jobs, local },
  );
  return replies;
}

describe('runPool', () => {
  it('runs 400 requests in 100 batches on 2 threads', async () => {
    const batches = Array.from({ length: 100 }, (_, b) => Array.from({ length: 4 }, (_, i) => `${b}.${i}`));
    const replies = await pool(batches, 2);
    expect(replies.size).toBe(400);
    expect(new Set(replies.values()).size).toBeLessThanOrEqual(2);
  });

  it('with local, the calling thread is one of the pool (and the only one with 1 job)', async () => {
    const batches = Array.from({ length: 40 }, (_, b) => [`${b}`]);
    const here = async (items: string[]) => {
      await new Promise((r) => setTimeout(r, 20));
      return items.map(() => -1);
    };
    const both = await pool(batches, 2, here);
    expect(both.size).toBe(40);
    const ids = new Set(both.values());
    expect(ids.has(-1)).toBe(true);
    expect(ids.size).toBe(2);
    expect(new Set((await pool(batches, 1, here)).values())).toEqual(new Set([-1]));
  });

  it('with local, the calling thread takes the first batch: it runs while the threads start', async () => {
    const here = async (items: string[]) => items.map(() => -1);
    for (let i = 0; i < 3; i++) expect((await pool([['first'], ['second']], 2, here)).get('first')).toBe(-1);
  });

  it('a thread that dies fails its batch; another thread takes the rest', async () => {
    const batches = [['a', 'b'], ['die', 'c'], ['d'], ['e'], ['f']];
    const replies = await pool(batches, 1);
    expect(replies.get('die')).toEqual({ error: expect.stringContaining('exited with code 7') });
    expect(replies.get('c')).toEqual(replies.get('die'));
    for (const k of ['a', 'b', 'd', 'e', 'f']) expect(typeof replies.get(k)).toBe('number');
    expect(replies.get('d')).not.toBe(replies.get('a'));
  });
});
