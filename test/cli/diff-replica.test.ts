/**
 * `memlens diff RUN --steps A,B --rank R` in a torchft run (torchtitan: replica_<k>/ below the step
 * folder): `--replica K` picks that replica group's cells; without it the lowest is taken, and
 * stderr says which.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const root = mkdtempSync(join(tmpdir(), 'memlens-ft-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const file = (step: number, replica: number) =>
  join(root, `step_${String(step).padStart(12, '0')}`, `replica_${replica}`, `000000_step_${step}.pickle`);
for (const step of [5, 10])
  for (const replica of [0, 1]) {
    mkdirSync(join(file(step, replica), '..'), { recursive: true });
    writeFileSync(file(step, replica), generateSnapshotBytes({ events: 500, seed: step + replica }).bytes);
  }

function diff(...extra: string[]) {
  return spawnSync(
    process.execPath,
    [...NODE_FLAGS, CLI, 'diff', root, '--steps', '5,10', '--rank', '0', ...extra],
    {
      encoding: 'utf8',
    },
  );
}

describe('memlens diff in a torchft run', () => {
  it('--replica K compares replica K', () => {
    const r = diff('--replica', '1');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`A: ${file(5, 1)}\nB: ${file(10, 1)}\n`);
    expect(r.stderr).toBe('');
  });

  it('without --replica, the lowest replica, and stderr says so', () => {
    const r = diff();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`A: ${file(5, 0)}\nB: ${file(10, 0)}\n`);
    expect(r.stderr).toContain('rank 0 at step 5 has replicas 0, 1: replica 0 is compared (give --replica K');
  });

  it('a replica the run lacks is a one-line error listing those it has', () => {
    const r = diff('--replica', '3');
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim()).toBe(`memlens: ${root}: has no replica 3 of rank 0 (replicas: 0, 1)`);
  });
});
