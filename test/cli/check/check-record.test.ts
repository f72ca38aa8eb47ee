/**
 * `memlens record --check -- CMD`: the program runs, then what it recorded is held to the budgets of
 * pyproject.toml [tool.memlens.check]. Debian's CPU torch with the test-only CUDA stand-in
 * (test/record-standin), whose n-th dump of a process holds n MiB.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../../src/node/node-flags.js';
import { CLI, PYTHON, removeTempDirs, STANDIN_DIR, tempDir } from '../../helpers/record-run.js';

afterAll(removeTempDirs);

/** Three dumps (1, 2, 3 MiB) and the exit dump, then the given exit code; a marker that it ran. */
const program = (exit: number) =>
  `import sys, torch, memlens\nopen("ran", "w").close()\nfor i in range(3):\n    memlens.dump("w%d" % i)\nsys.exit(${exit})\n`;

function recordChecked(toml: string, exit = 0, options = ['--check']) {
  const dir = tempDir('record-check');
  writeFileSync(join(dir, 'pyproject.toml'), toml);
  writeFileSync(join(dir, 'program.py'), program(exit));
  const r = spawnSync(
    'node',
    [...NODE_FLAGS, CLI, 'record', ...options, '--out', 'out', '--', PYTHON, 'program.py'],
    {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        PYTHONPATH: STANDIN_DIR,
        MEMLENS_STANDIN_LOG: join(dir, 'log'),
        GITHUB_ACTIONS: '',
      },
    },
  );
  return { ...r, cwd: dir, ran: existsSync(join(dir, 'ran')) };
}

describe('memlens record --check', () => {
  it("exits 1 when the recording breaks a budget, naming the site, after the program's success", () => {
    const r = recordChecked('[tool.memlens.check]\nmax-peak-allocated = "2MiB"\nno-oom = true\n');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /FAIL max-peak-allocated: peak allocated 4\.00 MiB in requested bytes \(rank 0, step 0\): over the budget of 2\.00 MiB/,
    );
    expect(r.stderr).toContain('from step (train.py:10)');
    expect(r.stdout).toBe('');
  }, 60_000);

  it('exits 0 when every rule holds', () => {
    const r = recordChecked('[tool.memlens.check]\nmax-peak-allocated = "8MiB"\nno-oom = true\n');
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/passed: 2 rules hold/);
  }, 60_000);

  it("keeps the program's own failure, unchecked", () => {
    const r = recordChecked('[tool.memlens.check]\nmax-peak-allocated = "2MiB"\n', 3);
    expect(r.status).toBe(3);
    expect(r.stderr).not.toContain('max-peak-allocated');
  }, 60_000);

  it("takes check's rule options, over pyproject.toml's table", () => {
    const toml = '[tool.memlens.check]\nmax-peak-allocated = "8MiB"\n';
    const tighter = recordChecked(toml, 0, ['--check', '--max-peak-allocated', '2MiB', '--no-oom']);
    expect(tighter.status).toBe(1);
    expect(tighter.stderr).toMatch(/FAIL max-peak-allocated: .*over the budget of 2\.00 MiB/);
    expect(tighter.stderr).toMatch(/ok {3}no-oom/);
    expect(tighter.stderr).toContain('from step (train.py:10)');
    const without = recordChecked(toml, 0, ['--check', '--no-config', '--no-oom']);
    expect(without.status).toBe(0);
    expect(without.stderr).toMatch(/passed: 1 rule holds/);
  }, 60_000);

  it('refuses rule options without --check, and a bad one, before running the program (exit 2)', () => {
    const unused = recordChecked('', 0, ['--max-peak-allocated', '2MiB', '--no-oom']);
    expect(unused.status).toBe(2);
    expect(unused.ran).toBe(false);
    expect(unused.stderr.trim().split('\n')).toEqual([
      'memlens record: --max-peak-allocated, --no-oom: rule options apply only with --check',
    ]);
    const bad = recordChecked('', 0, ['--check', '--tolerance', 'lots']);
    expect(bad.status).toBe(2);
    expect(bad.ran).toBe(false);
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/--tolerance: expected a size/)]);
  }, 60_000);

  it('refuses bad budgets in one line before running the program (exit 2)', () => {
    const r = recordChecked('[tool.memlens.check]\nmax-peak-allocated = "plenty"\n');
    expect(r.status).toBe(2);
    expect(r.ran).toBe(false);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^memlens record: --check: .*max-peak-allocated: expected a size/),
    ]);
  }, 60_000);

  it('reads the baseline before running the program: a missing one is refused in one line (exit 2)', () => {
    const r = recordChecked('[tool.memlens.check]\nbaseline = "ci/missing-baseline.json"\n');
    expect(r.status).toBe(2);
    expect(r.ran).toBe(false);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^memlens record: --check: .*ci\/missing-baseline\.json: cannot read the baseline \(ENOENT\)$/,
      ),
    ]);
  }, 60_000);

  it('holds the recording to a baseline read before it ran: its own saved baseline passes', () => {
    const first = recordChecked('', 0, ['--check', '--no-oom']);
    expect(first.status, first.stderr).toBe(0);
    const dir = tempDir('record-check-baseline');
    const saved = join(dir, 'base.json');
    const save = spawnSync(
      'node',
      [
        ...NODE_FLAGS,
        CLI,
        'check',
        join(first.cwd, 'out'),
        '--no-oom',
        '--no-config',
        '--save-baseline',
        saved,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(save.status, save.stderr).toBe(0);
    const same = recordChecked('', 0, ['--check', '--baseline', saved]);
    expect(same.status, same.stderr).toBe(0);
    expect(same.stderr).toMatch(/passed: /);
  }, 120_000);
});
