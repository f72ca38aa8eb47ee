/**
 * The GPU fixture programs (fixtures/record/*.py) and the README's example (examples/record/)
 * recorded on this machine's CPU (Debian's torch 1.13, no CUDA) as far as they go: each runs to
 * the end under `memlens record`, small (--steps, --size), with no helper failure; the example's
 * reference cycles are written and `memlens cycles` reads them. On a GPU the same scripts write
 * snapshots (their size defaults are for a GPU).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../../src/node/node-flags.js';
import {
  CLI,
  manifestOf,
  memlens,
  memlensLines,
  PYTHON,
  removeTempDirs,
  tempDir,
} from '../../helpers/record-run.js';

afterAll(removeTempDirs);

const ROOT = join(import.meta.dirname, '..', '..', '..');
const FIXTURES = join(ROOT, 'fixtures', 'record');

function record(script: string, recordArgs: string[], programArgs: string[]) {
  const out = join(tempDir('fixture'), 'out');
  const r = spawnSync(
    'node',
    [...NODE_FLAGS, CLI, 'record', '--out', out, ...recordArgs, '--', PYTHON, script, ...programArgs],
    { encoding: 'utf8', cwd: ROOT },
  );
  return { out, r, lines: memlensLines(r.stderr) };
}

const EXPECTED: Record<string, RegExp> = {
  'leak.py': /^leak: 4 steps on cpu, 4 losses kept with their graphs\n$/,
  'cycle.py': /^cycle: 4 steps on cpu\n$/,
  'oom.py': /^oom: no CUDA device, skipping the OOM \(ran 3 CPU steps\)\n$/,
  'expandable.py': /^expandable: 4 steps on cpu, expandable_segments:True\n$/,
  'two_ranks.py': /^(two_ranks: rank [01] done on cpu, [02] buffers kept\n){2}$/,
  'streams.py': /^streams: 4 steps on cpu, one stream\n$/,
};

describe('fixtures/record on CPU under memlens record', () => {
  it('has a test for every fixture program', () => {
    const scripts = readdirSync(FIXTURES).filter((n) => n.endsWith('.py') && !n.startsWith('_'));
    expect(scripts.sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [name, stdout] of Object.entries(EXPECTED)) {
    it(`${name} runs to the end, small, with the helper in every process`, () => {
      const { out, r, lines } = record(
        join(FIXTURES, name),
        ['--cycles', '--cycles-device', 'cpu'],
        ['--steps', '4', '--size', '64'],
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout, r.stderr).toMatch(stdout);
      expect(lines.filter((l) => l.includes('failed'))).toEqual([]);
      const m = manifestOf(out);
      expect(m.errors).toEqual([]);
      expect(m.processes.length, JSON.stringify(m.processes)).toBe(name === 'two_ranks.py' ? 3 : 1);
      expect(m.processes.every((p) => p.torch === '1.13.0a0' && p.cycles === 'observing')).toBe(true);
      if (name === 'two_ranks.py') expect(m.processes.map((p) => p.rank).sort()).toEqual([0, 0, 1]);
    });
  }
});

describe("the README's example", () => {
  it('records its reference cycles without a GPU and says in one line why there is no snapshot', () => {
    const { out, r, lines } = record(
      join(ROOT, 'examples', 'record', 'cycle_leak.py'),
      ['--cycles', '--cycles-device', 'cpu'],
      [],
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^trained 60 steps on cpu, last loss \d+\.\d{4}\n$/);
    expect(lines.filter((l) => l.includes('CUDA'))).toEqual([
      'memlens record: snapshots need a CUDA device; torch 1.13.0a0 sees none (recording reference cycles only)',
    ]);
    const m = manifestOf(out);
    expect(m.cycles.length).toBeGreaterThanOrEqual(3); // one per gc.collect() at least
    expect(lines).toContain(`memlens record: its reference cycles: memlens cycles ${out}`);
    // Each graph carries the optimizer steps the helper had counted at its collection.
    const steps = m.cycles.map(
      (c) => (JSON.parse(readFileSync(join(out, c.path), 'utf8')) as { step: number | null }).step,
    );
    for (const step of steps)
      expect(step).toSatisfy((n: unknown) => Number.isInteger(n) && (n as number) >= 1);
    expect(steps).toContain(20); // the first gc.collect(), after 20 steps
    const cycles = memlens('cycles', out);
    expect(cycles).toContain('Node.value → Tensor 256 KiB');
  });
});
