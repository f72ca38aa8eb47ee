/**
 * A snapshot replaced or rewritten while `memlens run` reads it: the figures decoded from the old
 * bytes must never be cached under the new file's hash or stat, so the next run shows the new
 * file. The reader is wrapped (vi.mock) so the file changes at a fixed point, right after its
 * last byte was read; everything else is the real path of decodeRun and its cache.
 */
import { copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/generate.js';
import { discoverRun } from '../../src/engine/run-layout/discover.js';
import { decodeRun } from '../../src/node/workers/decode-run.js';

/** Runs once, after some reader of the file has reached its end. */
const afterRead: { action: (() => void) | null } = { action: null };

vi.mock('../../src/node/files/read-file.js', async (original) => {
  const real = await original<Record<string, unknown>>();
  const wrap = (read: (...args: never[]) => AsyncGenerator<Uint8Array>) =>
    async function* (...args: never[]) {
      yield* read(...args);
      const action = afterRead.action;
      afterRead.action = null;
      action?.();
    };
  const out = { ...real };
  for (const name of ['readChunks', 'handleChunks'])
    if (typeof real[name] === 'function') out[name] = wrap(real[name] as never);
  return out;
});

const work = mkdtempSync(join(tmpdir(), 'memlens-rewrite-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function figures(file: string, cache: boolean) {
  const [s] = await decodeRun(discoverRun([file]), { cache, progress: false });
  return s!.result?.devices.map((d) => [d.allocated_bytes, d.trace_entries]);
}

describe('memlens run: a file that changes while it is read', () => {
  // Small files are hashed before they are looked up; large ones are found by size, mtime and inode.
  for (const [label, events] of [
    ['small', 3000],
    ['large (over 4 MiB)', 40_000],
  ] as const) {
    it(`${label}: replaced by a rename, the next run shows the new file`, async () => {
      process.env.XDG_CACHE_HOME = join(work, `cache-rename-${events}`);
      const file = join(work, `rank0-${events}.pickle`);
      const next = join(work, `next-${events}.pickle`);
      writeFileSync(file, generateSnapshotBytes({ events, seed: 1 }).bytes);
      writeFileSync(next, generateSnapshotBytes({ events: events + 500, seed: 2 }).bytes);
      const before = await figures(file, false);
      afterRead.action = () => renameSync(next, file);
      expect(await figures(file, true)).toEqual(before);
      expect(afterRead.action).toBeNull();
      const now = await figures(file, false);
      expect(now).not.toEqual(before);
      expect(await figures(file, true)).toEqual(now);
      expect(await figures(file, true)).toEqual(now);
    });

    it(`${label}: rewritten in place, the next run shows the new file`, async () => {
      process.env.XDG_CACHE_HOME = join(work, `cache-inplace-${events}`);
      const file = join(work, `rank1-${events}.pickle`);
      const next = join(work, `next-inplace-${events}.pickle`);
      writeFileSync(file, generateSnapshotBytes({ events, seed: 3 }).bytes);
      writeFileSync(next, generateSnapshotBytes({ events: events + 500, seed: 4 }).bytes);
      const before = await figures(file, false);
      afterRead.action = () => copyFileSync(next, file);
      await figures(file, true);
      expect(afterRead.action).toBeNull();
      const now = await figures(file, false);
      expect(now).not.toEqual(before);
      expect(await figures(file, true)).toEqual(now);
    });
  }
});
