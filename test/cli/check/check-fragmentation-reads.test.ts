/**
 * `memlens check` explains the fragmentation figure (segments, pinning sites) from the model of
 * the file where it is largest: a run's cells keep none, so that file is decoded again. That costs
 * a decode and a walk of the file's blocks, so only a broken fragmentation rule may ask for it,
 * not any check against a baseline. The decoder and the walk are wrapped (vi.mock) to count them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { parseBudgets } from '../../../src/engine/analyses/check/index.js';
import { writeGeneratedRun } from '../../helpers/generated-run.js';

const calls = { open: 0, blame: 0 };

vi.mock('../../../src/node/files/open-snapshot.js', async (original) => {
  const real = await original<typeof import('../../../src/node/files/open-snapshot.js')>();
  return { ...real, openSnapshot: counted('open', real.openSnapshot) };
});

vi.mock('../../../src/engine/analyses/fragmentation/index.js', async (original) => {
  const real = await original<typeof import('../../../src/engine/analyses/fragmentation/index.js')>();
  return { ...real, fragmentationBlame: counted('blame', real.fragmentationBlame) };
});

/** `f`, counting its calls in `calls[key]` (read when called: the mocks are made before `calls`). */
function counted<A extends unknown[], R>(key: keyof typeof calls, f: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    calls[key]++;
    return f(...args);
  };
}

// Worker threads load the built scripts; this test runs the sources, so a run decodes on this thread.
vi.mock('../../../src/node/workers/decode-run.js', async (original) => {
  const real = await original<typeof import('../../../src/node/workers/decode-run.js')>();
  return {
    ...real,
    decodeRun: (...[run, opts]: Parameters<typeof real.decodeRun>) =>
      real.decodeRun(run, { ...opts, jobs: 1, hereToo: true }),
  };
});

const { loadBaseline } = await import('../../../src/cli/check/check-inputs.js');
const { runCheck } = await import('../../../src/cli/commands/check.js');

const work = mkdtempSync(join(tmpdir(), 'memlens-check-frag-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const load = { cache: false, progress: false };
const run = join(work, 'run');
const file = join(work, 'frag.pickle');
writeGeneratedRun(run, { ranks: 2, windows: 3, seed: 8, oom: { rank: 1, cause: 'fragmentation' } });
writeFileSync(file, generateSnapshotBytes({ events: 4000, seed: 71, oomCause: 'fragmentation' }).bytes);

beforeEach(() => {
  calls.open = 0;
  calls.blame = 0;
});

describe('memlens check: the fragmentation account is read only for a broken fragmentation rule', () => {
  it('a run against its own baseline decodes none of its files again', async () => {
    const baseline = await loadBaseline(run, load);
    calls.open = 0;
    const result = await runCheck(run, parseBudgets({}), load, { baseline });
    expect(result.rules.find((r) => r.rule === 'baseline-fragmentation')?.passed).toBe(true);
    expect(calls).toEqual({ open: 0, blame: 0 });
  });

  it('a file against its own baseline is decoded once and its blocks are not walked', async () => {
    const baseline = await loadBaseline(file, load);
    calls.open = 0;
    calls.blame = 0;
    const result = await runCheck(file, parseBudgets({}), load, { baseline });
    expect(result.passed).toBe(true);
    expect(calls).toEqual({ open: 1, blame: 0 });
  });

  it('a broken rule in a run reads the file where it is largest, once, and names its segments', async () => {
    const result = await runCheck(run, parseBudgets({ 'max-fragmentation': '1GiB' }), load);
    const rule = result.rules.find((r) => r.rule === 'max-fragmentation')!;
    expect(rule.passed).toBe(false);
    expect(rule.segments.length).toBeGreaterThan(0);
    expect(calls).toEqual({ open: 1, blame: 1 });
  });
});
