import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { writeGeneratedRun } from '../helpers/generated-run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const root = mkdtempSync(join(tmpdir(), 'memlens-rundir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const files = writeGeneratedRun(root, {
  ranks: 2,
  windows: 3,
  layout: 'torchtitan',
  oom: { rank: 1, cause: 'exhaustion' },
});
writeFileSync(join(root, 'run.json'), '{"not": "a snapshot"}');

const memlens = (...args: string[]) =>
  execFileSync('node', [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });

describe('commands take run directories', () => {
  it('expands a directory into its snapshots in run order, each with the figures of the file alone', () => {
    const run = JSON.parse(memlens('summary', root, '--json')) as {
      files: { file: string; devices: unknown }[];
    };
    const rel = run.files.map((f) => f.file.slice(root.length + 1));
    const dir = (step: number) => `profiling/memory_snapshot/step_${String(step).padStart(12, '0')}`;
    const oomStep = files.find((f) => f.kind === 'oom')!.steps[1];
    expect(rel).toEqual([
      `${dir(1)}/000000_step_1.pickle`,
      `${dir(1)}/000001_step_1.pickle`,
      `${dir(2)}/000000_step_2.pickle`,
      `${dir(2)}/000001_step_2.pickle`,
      `${dir(3)}/000000_step_3.pickle`,
      `${dir(3)}/000001_step_3.pickle`,
      `${dir(oomStep)}_exit/000001_step_${oomStep}.pickle`,
    ]);
    const one = JSON.parse(memlens('summary', run.files[3]!.file, '--json')) as {
      files: { devices: unknown }[];
    };
    expect(run.files[3]!.devices).toEqual(one.files[0]!.devices);
  });

  it('says so in one line when a directory holds no snapshot', () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const r = spawnSync('node', [...NODE_FLAGS, CLI, 'summary', empty], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${empty}: no snapshot files`);
  });

  it('memlens run says nothing was judged where a step has under 3 ranks and a rank under 3 windows', () => {
    const small = join(root, 'small');
    writeGeneratedRun(small, { ranks: 2, windows: 2, seed: 2 });
    const text = memlens('run', small, '--no-cache');
    const why = 'outliers and growth not judged: a step needs 3 ranks, or a rank 3 windows, to compare them';
    // Said once, for both questions.
    expect(text.split('\n').filter((l) => l.includes('not judged'))).toEqual([`  ${why}`]);
    expect(text).not.toContain('no rank or step stands out');
  });
});
