/**
 * The GitHub Actions job of docs/check.md, run as written: the YAML block is parsed and checked to
 * be a workflow, then its `run:` steps run in order in a temporary repository, under bash as
 * Actions runs them (`bash --noprofile --norc -eo pipefail`), with its `if:` conditions, the
 * variables Actions sets (GITHUB_ACTIONS, GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE), `memlens` the built
 * CLI and `python` Debian's CPU torch with the test-only CUDA stand-in (test/record-standin),
 * whose n-th dump of a process holds n MiB allocated at train.py:10. What needs the network or a
 * GitHub runner is skipped, each for the reason written below.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { commandsOnPath, PYTHON, removeTempDirs, STANDIN_DIR, tempDir } from '../../helpers/record-run.js';

afterAll(removeTempDirs);

const ROOT = join(import.meta.dirname, '..', '..', '..');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
}

interface Workflow {
  name?: string;
  on: unknown;
  jobs: Record<string, { 'runs-on': unknown; steps: Step[] }>;
}

/** Steps not run here, by their command or action, and why. */
const SKIPPED: [RegExp, string][] = [
  [/^actions\/checkout@/, 'a GitHub action: the temporary directory is the checked-out repository'],
  [/^actions\/setup-node@/, "a GitHub action: this test's Node runs memlens"],
  [/^actions\/upload-artifact@/, 'a GitHub action: uploads to the run; the JUnit file is read here instead'],
  [
    /^npm install -g memlens$/,
    'installs from the npm registry (network); the `memlens` on PATH is the built CLI',
  ],
];

/** The yaml block after the "tested by" comment of docs/check.md, parsed. */
function documentedWorkflow(): Workflow {
  const doc = readFileSync(join(ROOT, 'docs', 'check.md'), 'utf8');
  const m = /<!-- tested by test\/cli\/check\/check-workflow\.test\.ts[^>]*-->\n```yaml\n([\s\S]*?)```/.exec(
    doc,
  );
  if (m === null) throw new Error('docs/check.md has no tested workflow block');
  return parseYaml(m[1]!) as Workflow;
}

/** The train.py the job runs: a few optimizer steps on CPU; each step is a window memlens records. */
const TRAIN = `import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
steps = parser.parse_args().steps
model = torch.nn.Linear(16, 16)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(steps):
    optimizer.zero_grad()
    model(torch.randn(8, 16)).pow(2).mean().backward()
    optimizer.step()
`;

interface JobRun {
  /** Per step, in order: what ran (its exit code) or why it did not. */
  steps: { step: Step; code?: number | null; skipped?: string; output: string }[];
  failed: boolean;
  dir: string;
  summary: string;
}

/** Runs the job's steps in a new repository holding train.py and `pyproject` as pyproject.toml. */
function runJob(workflow: Workflow, pyproject: string): JobRun {
  const dir = tempDir('check-workflow');
  writeFileSync(join(dir, 'train.py'), TRAIN);
  writeFileSync(join(dir, 'pyproject.toml'), pyproject);
  const summary = join(dir, 'step-summary.md');
  writeFileSync(summary, '');
  const env = {
    ...process.env,
    PATH: `${commandsOnPath(dir, { python: true })}:${process.env.PATH}`,
    PYTHONPATH: STANDIN_DIR,
    MEMLENS_STANDIN_LOG: join(dir, 'standin.log'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: dir,
    GITHUB_STEP_SUMMARY: summary,
  };
  const job = Object.values(workflow.jobs)[0]!;
  const out: JobRun = { steps: [], failed: false, dir, summary: '' };
  for (const step of job.steps) {
    const what = step.uses ?? step.run!.trim();
    const skip = SKIPPED.find(([pattern]) => pattern.test(what));
    if (skip !== undefined) {
      out.steps.push({ step, skipped: skip[1], output: '' });
      continue;
    }
    if (!runs(step.if, out.failed)) {
      out.steps.push({ step, skipped: `if: ${step.if}`, output: '' });
      continue;
    }
    const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], {
      cwd: dir,
      env,
      encoding: 'utf8',
    });
    out.steps.push({ step, code: r.status, output: r.stdout + r.stderr });
    if (r.status !== 0) out.failed = true;
  }
  out.summary = readFileSync(summary, 'utf8');
  return out;
}

/** Actions' status functions: a step runs while no step has failed, unless its `if:` says otherwise. */
function runs(condition: string | undefined, failed: boolean): boolean {
  const status: Record<string, boolean> = {
    'success()': !failed,
    'failure()': failed,
    'always()': true,
  };
  const c = condition?.trim().replace(/^\$\{\{\s*(.*?)\s*\}\}$/, '$1') ?? 'success()';
  if (!(c in status)) throw new Error(`the workflow's condition "${c}" is not one this test knows`);
  return status[c]!;
}

const junitOf = (dir: string) =>
  new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(
    readFileSync(join(dir, 'memlens-junit.xml'), 'utf8'),
  ) as { testsuites: { tests: string; failures: string; testsuite: { testcase: unknown } } };

const HAS_TORCH = spawnSync(PYTHON, ['-c', 'import torch']).status === 0;

describe('the GitHub Actions job of docs/check.md', () => {
  const workflow = documentedWorkflow();

  it('is a workflow: a trigger, and jobs of steps that each run a command or use an action', () => {
    expect(workflow.on).toBeDefined();
    const jobs = Object.entries(workflow.jobs);
    expect(jobs.length).toBeGreaterThan(0);
    for (const [id, job] of jobs) {
      expect(id).toMatch(/^[A-Za-z_][A-Za-z0-9_-]*$/);
      expect(job['runs-on'], id).toBeDefined();
      expect(Array.isArray(job.steps) && job.steps.length > 0, id).toBe(true);
      for (const step of job.steps) {
        expect(typeof step.run === 'string' || typeof step.uses === 'string', JSON.stringify(step)).toBe(
          true,
        );
        expect(step.run !== undefined && step.uses !== undefined, JSON.stringify(step)).toBe(false);
        if (step.with !== undefined) expect(step.uses, JSON.stringify(step)).toBeDefined();
        if (step.uses !== undefined) expect(step.uses).toMatch(/^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[\w.-]+$/);
      }
    }
  });

  it.skipIf(!HAS_TORCH)(
    'a budget broken: the job fails, the summary gets the Markdown report and the JUnit file its failure',
    () => {
      const job = runJob(workflow, '[tool.memlens.check]\nmax-peak-allocated = "8MiB"\nno-oom = true\n');
      const ran = job.steps.filter((s) => s.code !== undefined);
      // The record step, the summary (on failure) and the test results (always).
      expect(ran.map((s) => s.step.run?.split(' ').slice(0, 2).join(' '))).toEqual([
        'memlens record',
        'memlens check',
        'memlens check',
      ]);
      const record = ran[0]!;
      expect(record.code, record.output).toBe(1);
      expect(record.output).toMatch(
        /FAIL max-peak-allocated: peak allocated [\d.]+ MiB .*over the budget of 8\.00 MiB/,
      );
      expect(record.output).toMatch(/^::error title=memlens check max-peak-allocated::/m);
      expect(job.summary).toMatch(/^### memlens check: ❌ FAILED: 1 of 2 rules broken$/m);
      expect(job.summary).toContain('| max-peak-allocated |');
      expect(job.summary).toContain('from step (train.py:10)');
      const junit = junitOf(job.dir).testsuites;
      expect(Number(junit.tests)).toBe(2);
      expect(Number(junit.failures)).toBe(1);
      // Every step not run says why.
      for (const s of job.steps.filter((x) => x.code === undefined)) expect(s.skipped).toBeTruthy();
    },
    180_000,
  );

  it.skipIf(!HAS_TORCH)(
    'every rule holding: the job passes, no summary is written, the JUnit file has no failure',
    () => {
      const job = runJob(workflow, '[tool.memlens.check]\nmax-peak-allocated = "1GiB"\nno-oom = true\n');
      expect(job.failed, job.steps.map((s) => s.output).join('\n')).toBe(false);
      expect(job.steps.find((s) => s.step.name === 'Comment-ready summary')?.skipped).toBe('if: failure()');
      expect(job.summary).toBe('');
      expect(existsSync(join(job.dir, 'memlens-run', 'run.json'))).toBe(true);
      const junit = junitOf(job.dir).testsuites;
      expect(Number(junit.tests)).toBe(2);
      expect(Number(junit.failures)).toBe(0);
    },
    180_000,
  );
});
