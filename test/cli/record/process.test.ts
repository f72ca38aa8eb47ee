/**
 * memlens record leaves the program alone: its output, exit code and traceback are its own, every
 * Python process of the run (multiprocessing children too) gets the helper, a user's own
 * sitecustomize still runs, signals reach it. Real torch (Debian's 1.13 CPU build): no CUDA, so
 * memlens says in one line that snapshots need a device. Where a test needs snapshots it uses the
 * test-only CUDA stand-in (test/record-standin/cuda_standin.py).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../../src/node/node-flags.js';
import {
  CLI,
  manifestOf,
  PYTHON,
  recordProgram,
  removeTempDirs,
  STANDIN_DIR,
  tempDir,
} from '../../helpers/record-run.js';

afterAll(removeTempDirs);

/** Whether a process runs (an exited one that nobody reaped, a zombie, does not). */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

const NOISY = `
import sys, torch
print("to stdout", torch.ones(2).sum().item())
print("to stderr", file=sys.stderr)
sys.exit(3)
`;

const cli = (args: string[], opts: { cwd?: string } = {}) =>
  spawnSync('node', [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', ...opts });

describe('memlens record runs the program unchanged', () => {
  it('keeps its stdout, stderr and exit code, and says in one line that snapshots need CUDA', () => {
    const plain = spawnSync(PYTHON, ['-c', NOISY], { encoding: 'utf8' });
    const r = recordProgram(NOISY);
    expect(r.result.status).toBe(3);
    expect(r.result.stdout).toBe(plain.stdout);
    const programStderr = r.result.stderr
      .split('\n')
      .filter((l) => !l.startsWith('memlens record:'))
      .join('\n');
    expect(programStderr.trim()).toBe(plain.stderr.trim());
    expect(r.memlensLines.filter((l) => l.includes('CUDA'))).toEqual([
      'memlens record: snapshots need a CUDA device; torch 1.13.0a0 sees none',
    ]);
    expect(manifestOf(r.out)).toMatchObject({ exit_code: 3, files: [], torch: ['1.13.0a0'] });
  });

  it("--json prints run.json as the last line of stdout, after the program's own", () => {
    const r = recordProgram('import torch\nprint("mine")\n', { recordArgs: ['--json'] });
    const lines = r.result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('mine');
    expect(JSON.parse(lines.at(-1)!)).toEqual(manifestOf(r.out));
    expect(r.memlensLines.some((l) => l.includes('snapshots in'))).toBe(false);
  });

  it("keeps a raising program's traceback and exit code 1", () => {
    const r = recordProgram('import torch\ndef f():\n    raise ValueError("boom")\nf()\n');
    expect(r.result.status).toBe(1);
    expect(r.result.stderr).toMatch(/Traceback \(most recent call last\):[\s\S]*ValueError: boom/);
  });

  it('says that it records reference cycles only, when --cycles is on and there is no CUDA', () => {
    const r = recordProgram('import torch\n', { recordArgs: ['--cycles'] });
    expect(r.result.status).toBe(0);
    expect(r.memlensLines).toContain(
      'memlens record: snapshots need a CUDA device; torch 1.13.0a0 sees none (recording reference cycles only)',
    );
  });

  it("runs the user's own sitecustomize, and reports a failing one as site.py does", () => {
    const dir = tempDir('site');
    const mark = join(dir, 'mark');
    const ok = recordProgram('import torch\nprint("ran")\n', {
      env: { PYTHONPATH: STANDIN_DIR, STANDIN_SITE_MARK: mark },
    });
    expect(ok.result.stdout).toBe('ran\n');
    expect(readFileSync(mark, 'utf8')).toMatch(/^user sitecustomize ran in pid \d+\n$/);
    const failing = recordProgram('import torch\nprint("ran")\n', {
      env: { PYTHONPATH: STANDIN_DIR, STANDIN_SITE_FAIL: '1' },
    });
    expect(failing.result.status).toBe(0);
    expect(failing.result.stdout).toBe('ran\n');
    expect(failing.result.stderr).toContain(
      "Error in sitecustomize; set PYTHONVERBOSE for traceback:\nRuntimeError: the user's sitecustomize fails on purpose",
    );
    // The helper still started after the failing sitecustomize.
    expect(manifestOf(failing.out).processes[0]).toMatchObject({ torch: '1.13.0a0', cuda: 'cpu-only build' });
  });

  it('sets up at once when torch was imported before the program ran (by a sitecustomize)', () => {
    const r = recordProgram(
      'import torch\nopt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)\nopt.step()\nopt.step()\n',
      { env: { PYTHONPATH: STANDIN_DIR, STANDIN_SITE_IMPORT_TORCH: '1' } },
    );
    expect(r.result.status).toBe(0);
    expect(manifestOf(r.out).processes[0]).toMatchObject({ step_hook: 'Optimizer.step wrapper', steps: 2 });
  });

  it('records multiprocessing children too, each with its rank from RANK', () => {
    const r = recordProgram(
      `import multiprocessing as mp, os, torch
def train():
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
if __name__ == "__main__":
    os.environ["RANK"] = "1"
    child = mp.get_context("spawn").Process(target=train)
    child.start(); child.join()
    os.environ["RANK"] = "0"
    train()
    print("exit", child.exitcode)
`,
      { standin: true, recordArgs: ['--every', '1'] },
    );
    expect(r.result.stdout).toBe('exit 0\n');
    const m = manifestOf(r.out);
    const ranks = m.processes.map((p) => p.rank);
    expect(ranks).toEqual([0, 1]);
    const [parent, child] = m.processes;
    expect(m.files.filter((f) => f.kind === 'step').map((f) => f.path)).toEqual([
      `step1/torch_memory_rank0_pid${parent!.pid}.pickle`,
      `step1/torch_memory_rank1_pid${child!.pid}.pickle`,
    ]);
    expect(child!.ppid).toBe(parent!.pid);
  });
});

describe('memlens record: signals and exit codes', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)
    it(`forwards ${signal} (not from a terminal) to the command and exits ${code}, with run.json written`, async () => {
      const dir = tempDir('sig');
      const script = join(dir, 'sleep.py');
      writeFileSync(script, 'import time, torch\nprint("ready", flush=True)\ntime.sleep(60)\n');
      const out = join(dir, 'out');
      const child = spawn('node', [...NODE_FLAGS, CLI, 'record', '--out', out, '--', PYTHON, script], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (d: Buffer) => d.includes('ready') && resolve()),
      );
      child.kill(signal);
      const exit = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(exit).toBe(code);
      expect(manifestOf(out)).toMatchObject({ exit_code: code, signal });
    });

  it('SIGTERM reaches every process the command started; what ignores it is killed after 10 s; run.json comes after', async () => {
    const dir = tempDir('group');
    const launcher = join(dir, 'launcher.py');
    // Two Python processes under a launcher (as torchrun starts ranks); one ignores SIGTERM and
    // beats into a file while it runs.
    writeFileSync(
      launcher,
      [
        'import os, subprocess, sys, time',
        'd = sys.argv[1]',
        'stubborn = ("import os, signal, sys, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"',
        "            \"open(sys.argv[1] + '/pid_stubborn', 'w').write(str(os.getpid()))\\n\"",
        "            \"while True:\\n    open(sys.argv[1] + '/beat', 'a').write('.')\\n    time.sleep(0.05)\\n\")",
        "plain = (\"import os, sys, time\\nopen(sys.argv[1] + '/pid_plain', 'w').write(str(os.getpid()))\\n\"",
        '         "while True:\\n    time.sleep(0.05)\\n")',
        'procs = [subprocess.Popen([sys.executable, "-c", code, d]) for code in (stubborn, plain)]',
        'while not all(os.path.exists(os.path.join(d, f)) for f in ("pid_stubborn", "pid_plain")):',
        '    time.sleep(0.02)',
        'print("ready", flush=True)',
        'for p in procs:',
        '    p.wait()',
        '',
      ].join('\n'),
    );
    const out = join(dir, 'out');
    const child = spawn('node', [...NODE_FLAGS, CLI, 'record', '--out', out, '--', PYTHON, launcher, dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => d.includes('ready') && resolve()),
    );
    const pids = ['pid_stubborn', 'pid_plain'].map((f) => Number(readFileSync(join(dir, f), 'utf8')));
    try {
      const sent = Date.now();
      child.kill('SIGTERM');
      const exit = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(Date.now() - sent).toBeGreaterThanOrEqual(10_000);
      expect(exit).toBe(143);
      expect(pids.filter(runs)).toEqual([]);
      const beats = statSync(join(dir, 'beat'));
      await new Promise((r) => setTimeout(r, 300));
      expect(statSync(join(dir, 'beat')).size).toBe(beats.size);
      expect(statSync(join(out, 'run.json')).mtimeMs).toBeGreaterThanOrEqual(beats.mtimeMs);
      expect(manifestOf(out)).toMatchObject({ exit_code: 143, signal: 'SIGTERM' });
    } finally {
      for (const pid of pids.filter(runs)) process.kill(pid, 'SIGKILL');
    }
  }, 40_000);

  it("keeps the command's exit code when run.json cannot be written, and says why", () => {
    const r = recordProgram(
      'import os\nos.makedirs(os.path.join(os.environ["MEMLENS_RECORD_OUT"], "run.json", "in-the-way"))\nraise SystemExit(4)\n',
    );
    expect(r.result.status).toBe(4);
    expect(r.memlensLines).toContain(`memlens record: cannot write ${join(r.out, 'run.json')} (EISDIR)`);
  });

  it('lets Ctrl+C at a terminal reach the command once, so its own clean-up runs', () => {
    const dir = tempDir('tty');
    const program = join(dir, 'interruptible.py');
    writeFileSync(
      program,
      'import time, torch\nprint("ready", flush=True)\ntry:\n    time.sleep(30)\nexcept KeyboardInterrupt:\n' +
        '    try:\n        time.sleep(1.0)\n        print("cleanup done", flush=True)\n' +
        '    except KeyboardInterrupt:\n        print("cleanup interrupted", flush=True)\n',
    );
    const r = spawnSync(PYTHON, ['test/python/record/ctrl_c.py', CLI, join(dir, 'out'), program], {
      encoding: 'utf8',
    });
    expect(r.stdout).toContain('cleanup done');
    expect(r.stdout).not.toContain('cleanup interrupted');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('exit 0');
  });

  it('a command that dies of a signal gives 128 + n', () => {
    const r = recordProgram('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n');
    expect(r.result.status).toBe(137);
  });
});

describe('memlens record: where it writes', () => {
  it('without --out, records into a new memlens-run-<time> directory of the current one, and says so', () => {
    const dir = tempDir('default-out');
    const r = cli(['record', '--', PYTHON, '-c', 'import torch'], { cwd: dir });
    expect(r.status).toBe(0);
    const made = readdirSync(dir);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatch(/^memlens-run-\d{8}-\d{6}$/);
    expect(r.stderr.split('\n')[0]).toBe(`memlens record: recording into ${join(dir, made[0]!)}`);
    expect(manifestOf(join(dir, made[0]!)).exit_code).toBe(0);
  });
});

describe('memlens record: bad input', () => {
  it('says what is wrong in one line and exits non-zero', () => {
    const dir = tempDir('bad');
    const missing = cli(['record', '--out', join(dir, 'a')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      'memlens record: no command to run: memlens record [options] -- CMD ARGS...\n',
    );
    const notFound = cli(['record', '--out', join(dir, 'b'), '--', join(dir, 'no-such-program')]);
    expect(notFound.status).toBe(127);
    expect(notFound.stderr).toContain(`memlens record: ${join(dir, 'no-such-program')}: command not found\n`);
    mkdirSync(join(dir, 'used'));
    writeFileSync(join(dir, 'used', 'x'), '');
    const used = cli(['record', '--out', join(dir, 'used'), '--', PYTHON, '-c', 'pass']);
    expect(used.status).toBe(2);
    expect(used.stderr).toBe(
      `memlens record: ${join(dir, 'used')}: not empty; record each run into a new directory\n`,
    );
    for (const [option, value, what] of [
      ['--every', 'often', 'expected a non-negative integer'],
      ['--max-entries', '0', 'expected a positive integer'],
      ['--max-bytes', '12XB', 'expected a size'],
      ['--stacks', 'cpp', 'Allowed choices are python, all'],
    ] as const) {
      const r = cli(['record', option, value, '--', PYTHON, '-c', 'pass'], { cwd: dir });
      expect(r.status, option).not.toBe(0);
      expect(r.stderr.split('\n')[0], option).toContain(what);
    }
  });
});
