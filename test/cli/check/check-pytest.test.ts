/**
 * The pytest fixture of docs/check.md, run as written: Debian's pytest and CPU torch
 * (/usr/bin/python3) with the test-only CUDA stand-in (test/record-standin), whose first dump of a
 * process holds 1 MiB allocated at train.py:10.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandsOnPath, PYTHON, removeTempDirs, STANDIN_DIR, tempDir } from '../../helpers/record-run.js';

afterAll(removeTempDirs);

const ROOT = join(import.meta.dirname, '..', '..', '..');
/** Debian's python3-pytest beside its torch (apt install python3-pytest). */
const HAS_PYTEST = spawnSync(PYTHON, ['-c', 'import pytest']).status === 0;

/** The python block after the "tested by" comment of docs/check.md. */
function documentedConftest(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'check.md'), 'utf8');
  const m = /<!-- tested by test\/cli\/check\/check-pytest\.test\.ts[^>]*-->\n```python\n([\s\S]*?)```/.exec(
    doc,
  );
  if (m === null) throw new Error('docs/check.md has no tested conftest.py block');
  return m[1]!;
}

const TESTS = `
import pytest
import torch


@pytest.mark.memlens("--max-peak-allocated", "512KiB")
def test_over_budget():
    torch.ones(4).sum()


@pytest.mark.memlens("--max-peak-allocated", "2MiB", "--no-oom")
def test_within_budget():
    torch.ones(4).sum()
`;

describe('the pytest fixture of docs/check.md', () => {
  it.skipIf(!HAS_PYTEST)(
    'fails the test whose recorded peak breaks its budget, with the figure and the site',
    () => {
      const dir = tempDir('check-pytest');
      writeFileSync(join(dir, 'conftest.py'), documentedConftest());
      writeFileSync(join(dir, 'test_memory.py'), TESTS);
      const bin = commandsOnPath(dir);
      const r = spawnSync(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_memory.py'], {
        cwd: dir,
        encoding: 'utf8',
        env: {
          ...process.env,
          PATH: `${bin}:${process.env.PATH}`,
          PYTHONPATH: `${STANDIN_DIR}:${join(ROOT, 'python')}`,
          MEMLENS_STANDIN_LOG: join(dir, 'standin.log'),
          GITHUB_ACTIONS: '',
        },
      });
      const out = r.stdout + r.stderr;
      // pytest counts a teardown error apart from the test's own pass: only the over-budget test errs.
      expect(r.status, out).toBe(1);
      expect(out).toMatch(/2 passed, 1 error/);
      expect(out).not.toMatch(/ERROR .*test_within_budget/);
      expect(out).toMatch(/ERROR at teardown of test_over_budget/);
      expect(out).toMatch(
        /FAIL max-peak-allocated: peak allocated 1\.00 MiB in requested bytes: over the budget of 512 KiB/,
      );
      expect(out).toContain('1.00 MiB from step (train.py:10)');
    },
    120_000,
  );
});
