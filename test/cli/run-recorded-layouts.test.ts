/**
 * `memlens run` on runs recorded by real PyTorch (fixtures/layout/README.md) whose names cannot
 * tell their layout: a loop's `snapshot_<i>` against Megatron-Bridge's `snapshot_<rank>`, and verl's
 * `step3/` window with and without profile_continuous_steps (the same names, another order).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'layout');

interface JsonRun {
  layout: string;
  snapshots: { kind: string; rank: number | null; step: number | null; last_step: number | null }[];
  layout_doubts: string[];
}

function run(folder: string): { json: JsonRun; text: string } {
  const memlens = (...args: string[]) =>
    spawnSync('node', [...NODE_FLAGS, CLI, 'run', '--no-cache', join(FIXTURES, folder), ...args], {
      encoding: 'utf8',
    });
  const json = memlens('--json');
  expect(json.status, json.stderr).toBe(0);
  return { json: (JSON.parse(json.stdout) as { runs: JsonRun[] }).runs[0]!, text: memlens().stdout };
}

/** The snapshots in run order, named as the table's columns name them. */
const columns = (r: JsonRun) =>
  r.snapshots.map((s) => {
    const steps = s.step === s.last_step ? `${s.step}` : `${s.step}-${s.last_step}`;
    return s.kind === 'post-update' ? `post ${steps}` : steps;
  });

describe('run layouts the names cannot tell, recorded by PyTorch 2.11', () => {
  it("reads a loop's snapshot_0..3 of one process as its steps, not as Megatron-Bridge's ranks", () => {
    const { json } = run('loop');
    expect(json.snapshots.map((s) => [s.kind, s.rank, s.step])).toEqual(
      [0, 1, 2, 3].map((i) => ['step', null, i]),
    );
    expect(columns(json)).toEqual(['0', '1', '2', '3']);
    expect(json.layout_doubts).toEqual([]);
  });

  it('keeps two processes on one device as ranks, and says it is not certain', () => {
    const { json, text } = run('ranks');
    expect(json.snapshots.map((s) => [s.kind, s.rank])).toEqual([
      ['end', 0],
      ['end', 1],
    ]);
    expect(json.layout_doubts).toHaveLength(1);
    expect(json.layout_doubts[0]).toMatch(/^not certain: .*ranks 0-1.*all are on cuda:0/);
    expect(text).toContain('not certain:');
  });

  it("places verl's step3/ window of continuous steps 3-5 after post 5, and of step 3 alone before post 4", () => {
    expect(columns(run('verl-continuous').json)).toEqual([
      'post 2',
      'post 3',
      'post 4',
      'post 5',
      '3-5',
      'post 6',
      'post 7',
    ]);
    const plain = run('verl-plain').json;
    expect(columns(plain)).toEqual(['post 2', 'post 3', '3', 'post 4', 'post 5', 'post 6', 'post 7']);
    expect(plain.layout_doubts).toEqual([]);
  });
});
