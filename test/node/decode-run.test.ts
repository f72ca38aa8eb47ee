/**
 * decodeRun's queue: large files go one per batch, largest first, so the last file taken is
 * never a large one that keeps one thread busy while the others wait.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { discoverRun } from '../../src/engine/run-layout/index.js';
import { decodeRun } from '../../src/node/workers/decode-run.js';

const root = mkdtempSync(join(tmpdir(), 'memlens-decode-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const MiB = 1024 * 1024;

describe('decodeRun', () => {
  it('takes large files largest first, whatever their order in the run', async () => {
    const dir = join(root, 'step1');
    mkdirSync(dir, { recursive: true });
    // Not snapshots (each fails at its first byte): the order they are taken in is what counts.
    const files = [2, 5, 3, 4].map((mib, rank) => {
      const file = join(dir, `torch_memory_rank${rank}_pid${100 + rank}.pickle`);
      writeFileSync(file, Buffer.alloc(mib * MiB, 0x78));
      return file;
    });
    const taken: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await decodeRun(discoverRun(files), {
        cache: false,
        jobs: 1,
        hereToo: true,
        progress: false,
        onResult: (s) => taken.push(s.cell.path),
      });
    } finally {
      stderr.mockRestore();
    }
    expect(taken).toEqual([files[1], files[3], files[2], files[0]]);
  });
});
