/**
 * memlens record's windows, dumps and manifest, end to end: the built CLI runs a real PyTorch
 * training loop (Debian's torch 1.13, CPU) with memlens's helper. The CUDA calls the helper makes
 * (memory history, snapshot dump, OOM observer) go to a STAND-IN (test/record-standin/
 * cuda_standin.py), since this machine has no CUDA: it logs every call and writes small real
 * snapshot pickles, which `memlens run` then reads.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { manifestOf, memlens, recordProgram, removeTempDirs } from '../../helpers/record-run.js';

afterAll(removeTempDirs);

const TRAIN = `
import sys, torch
model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train(steps):
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(2, 8)).sum().backward()
        opt.step()
`;

interface RunJson {
  runs: {
    layout: string;
    snapshots: { file: string; step: number | null; rank: number; pid: number; kind: string }[];
  }[];
}

const runOf = (out: string) => (JSON.parse(memlens('run', out, '--json', '--no-cache')) as RunJson).runs[0]!;
const rel = (out: string, f: string) => f.slice(out.length + 1);
const calls = (log: Record<string, unknown>[]) =>
  log.map((c) =>
    c.call === 'record' ? `record ${c.enabled}` : c.call === 'dump' ? `dump ${dirOf(c.path)}` : c.call,
  );
const dirOf = (p: unknown) => String(p).split('/').at(-2);

describe('memlens record with the CUDA stand-in', () => {
  it('cuts a window every K optimizer steps in verl layout, clearing the history after each, and dumps at exit', () => {
    const r = recordProgram(`${TRAIN}\ntrain(int(sys.argv[1]))\nprint("trained")\n`, {
      standin: true,
      recordArgs: ['--every', '2', '--max-entries', '1234'],
      programArgs: ['5'],
      env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' },
    });
    expect(r.result.status).toBe(0);
    expect(r.result.stdout).toBe('trained\n');
    const pid = manifestOf(r.out).processes[0]!.pid;
    expect(calls(r.log())).toEqual([
      'record all',
      'attach_oom_observer',
      'dump step2',
      'record null',
      'record all',
      'dump step4',
      'record null',
      'record all',
      'dump exit_step5',
    ]);
    expect(r.log()[0]).toMatchObject({ stacks: 'python', max_entries: 1234, context: 'all' });
    // Every file was written to a temporary name first.
    expect(
      r
        .log()
        .filter((c) => c.call === 'dump')
        .every((c) => String(c.path).endsWith('.pickle.tmp')),
    ).toBe(true);
    const run = runOf(r.out);
    // verl's names, told apart as memlens record's by the run's .memlens/ record.
    expect(run.layout).toBe('memlens-record');
    expect(run.snapshots.map((s) => [rel(r.out, s.file), s.kind, s.step, s.rank, s.pid])).toEqual([
      [`step2/torch_memory_rank0_pid${pid}.pickle`, 'step', 2, 0, pid],
      [`step4/torch_memory_rank0_pid${pid}.pickle`, 'step', 4, 0, pid],
      // The exit dump: a column of its own at the step its folder names (docs/producers.md).
      [`exit_step5/torch_memory_rank0_pid${pid}.pickle`, 'exit', 5, 0, pid],
    ]);
    // The run at a glance, then how to open it.
    expect(r.result.stderr).toContain(
      'memlens-record layout: 1 rank × 2 step windows, 1 dump outside step windows, 3 files',
    );
    expect(r.memlensLines.at(-1)).toBe(`memlens record: open it: memlens view ${r.out}`);
  });

  it('starts recording at the first optimizer step where torch has no torch.cuda._lazy_call', () => {
    const r = recordProgram(`${TRAIN}\ntrain(3)\n`, {
      standin: true,
      env: { MEMLENS_STANDIN_NO_LAZY_CALL: '1' },
    });
    expect(r.result.status).toBe(0);
    expect(calls(r.log())).toEqual([
      'record all',
      'attach_oom_observer',
      'dump step2',
      'record null',
      'record all',
      'dump step3',
      'record null',
      'record all',
      'dump exit_step3',
    ]);
  });

  it('writes run.json: command, times, torch, allocator settings, files with sizes', () => {
    const r = recordProgram(`${TRAIN}\ntrain(2)\n`, {
      standin: true,
      env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' },
    });
    const m = manifestOf(r.out);
    expect(m.command.slice(1)).toEqual([join(r.dir, 'program.py')]);
    expect(m.cwd).toBe(r.dir);
    expect(m.exit_code).toBe(0);
    expect(m.torch).toEqual(['1.13.0a0']);
    expect(m.allocator).toEqual([{ PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' }]);
    expect(Date.parse(m.ended)).toBeGreaterThanOrEqual(Date.parse(m.started));
    expect(m.options).toMatchObject({ every: 1, max_entries: 100000, stacks: 'python', cycles: false });
    expect(m.processes).toHaveLength(1);
    expect(m.processes[0]).toMatchObject({ rank: 0, cuda: 'recording', history_api: '2.1', steps: 2 });
    expect(m.files.map((f) => [f.path.split('/')[0], f.kind, f.step])).toEqual([
      ['exit_step2', 'exit', 2],
      ['step1', 'step', 1],
      ['step2', 'step', 2],
    ]);
    for (const f of m.files) expect(f.bytes).toBe(statSync(join(r.out, f.path)).size);
    expect(readdirSync(r.out).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('memlens.dump(name) and SIGUSR1 cut named windows; a handler of the program is still called', () => {
    const r = recordProgram(
      `import os, signal
signal.signal(signal.SIGUSR1, lambda s, f: print("program's own SIGUSR1 handler"))
${TRAIN}
import memlens
train(1)
print(os.path.basename(os.path.dirname(memlens.dump("after eval"))))
train(1)
os.kill(os.getpid(), signal.SIGUSR1)
train(1)
`,
      { standin: true, recordArgs: ['--every', '0', '--stacks', 'all'] },
    );
    expect(r.result.status).toBe(0);
    expect(r.result.stdout).toBe("after_eval_step1\nprogram's own SIGUSR1 handler\n");
    expect(r.log()[0]).toMatchObject({ call: 'record', stacks: 'all' });
    expect(calls(r.log())).toEqual([
      'record all',
      'attach_oom_observer',
      'dump after_eval_step1',
      'record null',
      'record all',
      'dump sigusr1_step2',
      'record null',
      'record all',
      'dump exit_step3',
    ]);
    expect(manifestOf(r.out).files.map((f) => [f.kind, f.name])).toEqual([
      ['named', 'after eval'],
      ['exit', 'exit'],
      ['named', 'sigusr1'],
    ]);
  });

  it('dumps at an OOM into oom_<stamp>/ without ending the window; the traceback and exit code stay', () => {
    const r = recordProgram(`${TRAIN}\ntrain(2)\nimport cuda_standin\ncuda_standin.raise_oom(1 << 30)\n`, {
      standin: true,
      recordArgs: ['--every', '0'],
    });
    expect(r.result.status).toBe(1);
    expect(r.result.stderr).toContain('Traceback (most recent call last)');
    expect(r.result.stderr).toContain(
      'RuntimeError: CUDA out of memory (stand-in). Tried to allocate 1073741824 bytes',
    );
    const seq = calls(r.log());
    expect(seq.slice(2)).toEqual([
      'oom',
      expect.stringMatching(/^dump oom_\d{8}-\d{6}-\d{6}$/),
      'dump exit_step2',
    ]);
    const run = runOf(r.out);
    const oom = run.snapshots.find((s) => s.kind === 'oom')!;
    expect(rel(r.out, oom.file)).toMatch(/^oom_\d{8}-\d{6}-\d{6}\/torch_memory_oom_rank0_pid\d+\.pickle$/);
    const text = memlens('oom', oom.file);
    expect(text).toContain('1.00 GiB');
  });

  it('--max-bytes drops the oldest step windows, says so, and lists them in run.json', () => {
    const r = recordProgram(`${TRAIN}\ntrain(6)\n`, { standin: true, recordArgs: ['--max-bytes', '1500'] });
    expect(r.result.status).toBe(0);
    const m = manifestOf(r.out);
    const dropped = m.dropped.map((d) => d.path.split('/')[0]);
    expect(dropped.length).toBeGreaterThan(0);
    // Oldest first, and exactly the windows missing from the directory.
    expect(dropped).toEqual(['step1', 'step2', 'step3', 'step4', 'step5'].slice(0, dropped.length));
    for (const d of dropped) expect(existsSync(join(r.out, d))).toBe(false);
    expect(existsSync(join(r.out, 'step6'))).toBe(true);
    const said = r.memlensLines.filter((l) => l.includes('dropped step'));
    expect(said.length).toBe(Math.min(3, dropped.length));
    expect(said[0]).toMatch(/dropped step1\/torch_memory_rank0_pid\d+\.pickle \(\d+ B, the oldest window\)/);
    expect(r.memlensLines.join('\n')).toContain(`${dropped.length} windows dropped (--max-bytes)`);
  });

  it("lists a killed process's windows in run.json from their paths", () => {
    const r = recordProgram(`${TRAIN}\ntrain(3)\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n`, {
      standin: true,
    });
    expect(r.result.status).toBe(137);
    const m = manifestOf(r.out);
    const pid = m.processes[0]!.pid;
    expect(m.files.map((f) => [f.path.split('/')[0], f.kind, f.step, f.rank, f.pid])).toEqual([
      ['step1', 'step', 1, 0, pid],
      ['step2', 'step', 2, 0, pid],
      ['step3', 'step', 3, 0, pid],
    ]);
  });

  it('a failing helper is said once and the program runs on unchanged', () => {
    const r = recordProgram(`${TRAIN}\ntrain(3)\nprint("done", flush=True)\nraise SystemExit(3)\n`, {
      standin: true,
      env: { MEMLENS_STANDIN_DUMP_FAILS: '1' },
    });
    expect(r.result.status).toBe(3);
    expect(r.result.stdout).toBe('done\n');
    const failures = r.memlensLines.filter((l) => l.includes('failed'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(
      /cutting the window at optimizer step 1 failed in pid \d+ \(OSError: stand-in dump fails on purpose\); recording in this process stops, the program goes on/,
    );
    expect(manifestOf(r.out).errors.map((e) => e.where)).toEqual(['cutting the window at optimizer step 1']);
  });
});
