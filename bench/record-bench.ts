/**
 * The cost of `memlens record`'s Python helper on a training loop (issue 16: under 1 % on a CPU
 * loop of 1,000 steps with windows every 100 steps; with --cycles, reported). Each configuration
 * runs the same loop; the loop times itself (perf_counter around the 1,000 steps, so Python and
 * torch start-up, equal for all, stay out) and the whole command's wall time is kept too.
 * Configurations alternate run by run, so a busy moment of the shared machine hits all of them.
 *
 *   node --no-concurrent-recompilation dist-tools/bench/record-bench.js [--runs 7] [--steps 1000]
 *
 * This machine has no CUDA: "record" measures the hooks (sitecustomize, post-import setup, the
 * optimizer step hook); "record + windows" adds the test-only CUDA stand-in
 * (test/record-standin/), so the helper cuts, writes, renames and clears 10 windows and an exit
 * dump of small snapshots (the real _dump_snapshot's cost is the GPU's and the snapshot's size).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { ROOT } from './cached-snapshot.js';
import { loadLine, machineLine } from './machine.js';

const PYTHON = '/usr/bin/python3';
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/**
 * A small MLP trained with Adam (a few milliseconds a step on one core), timed in CPU time, which
 * other processes on the shared machine disturb less than wall time; then 20,000 steps of an
 * optimizer with nothing to update, whose per-step time shows the step hook's own cost.
 */
const LOOP = `
import json, sys, time, torch
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(32, 256)
steps = int(sys.argv[1])
cpu, wall = time.process_time(), time.perf_counter()
for _ in range(steps):
    opt.zero_grad(set_to_none=True)
    model(x).pow(2).mean().backward()
    opt.step()
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
idle = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.0)
idle_steps = int(sys.argv[2])
tiny = time.process_time()
for _ in range(idle_steps):
    idle.step()
tiny = (time.process_time() - tiny) / max(1, idle_steps)
print(json.dumps({"cpu": cpu, "wall": wall, "tiny": tiny}))
`;

interface Config {
  name: string;
  record: string[] | null;
  env?: NodeJS.ProcessEnv;
}

function configs(dir: string): Config[] {
  const standin = {
    PYTHONPATH: join(ROOT, 'test', 'record-standin'),
    MEMLENS_STANDIN_LOG: join(dir, 'standin.log'),
  };
  return [
    { name: 'plain python', record: null },
    { name: 'record --every 100', record: ['--every', '100'] },
    { name: 'record --every 100 + windows (stand-in)', record: ['--every', '100'], env: standin },
    {
      name: 'record --every 100 --cycles --cycles-device cpu',
      record: ['--every', '100', '--cycles', '--cycles-device', 'cpu'],
    },
  ];
}

interface Times {
  cpu: number;
  wall: number;
  tiny: number;
  command: number;
}

function runOnce(c: Config, script: string, steps: number, dir: string, k: number): Times {
  const out = join(dir, `out-${k}`);
  // Where windows are cut, 2,000 idle steps (20 windows) give the cost of a window.
  const program = [script, String(steps), c.env === undefined ? '20000' : '2000'];
  const [file, args] =
    c.record === null
      ? [PYTHON, program]
      : [
          process.execPath,
          [...NODE_FLAGS, CLI, 'record', '--out', out, ...c.record, '--', PYTHON, ...program],
        ];
  const started = process.hrtime.bigint();
  const r = spawnSync(file, args, { encoding: 'utf8', env: { ...process.env, ...c.env } });
  const command = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status !== 0) throw new Error(`${c.name}: exited ${r.status}: ${r.stderr}`);
  rmSync(out, { recursive: true, force: true });
  return { ...(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Omit<Times, 'command'>), command };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (x: number, base: number) => `${(((x - base) / base) * 100).toFixed(2)} %`;

function main(opts: { runs: string; steps: string }): void {
  const runs = Math.max(1, Number(opts.runs));
  const steps = Math.max(1, Number(opts.steps));
  const dir = mkdtempSync(join(tmpdir(), 'memlens-record-bench-'));
  const script = join(dir, 'loop.py');
  writeFileSync(script, LOOP);
  const all = configs(dir);
  const times = all.map(() => [] as Times[]);
  let k = 0;
  for (let i = 0; i < runs; i++) {
    for (const [j, c] of all.entries()) times[j]!.push(runOnce(c, script, steps, dir, k++));
  }
  rmSync(dir, { recursive: true, force: true });
  const m = (j: number, f: keyof Times) => median(times[j]!.map((t) => t[f]));
  console.log(machineLine());
  console.log(loadLine());
  console.log(`${steps} optimizer steps, ${runs} runs per configuration, alternating; medians\n`);
  console.log(
    '| configuration | loop CPU time | overhead | loop wall time | overhead | idle optimizer step | helper cost (idle steps) | that cost over the loop | command wall |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  all.forEach((c, j) => {
    const extra = (m(j, 'tiny') - m(0, 'tiny')) * 1e6;
    const windows = c.env !== undefined;
    // An idle step that cuts no window costs the hook; with windows every 100 steps, 100 idle
    // steps cost the hook plus one window.
    const cost =
      j === 0
        ? '—'
        : windows
          ? `${((extra * 100) / 1000).toFixed(2)} ms a window`
          : `${extra.toFixed(1)} µs a step`;
    // Both spread over the loop's steps as they are spread over the idle ones.
    const share = j === 0 ? '—' : `${(((extra * steps) / 1e6 / m(0, 'cpu')) * 100).toFixed(3)} %`;
    console.log(
      `| ${c.name} | ${m(j, 'cpu').toFixed(3)} s | ${j === 0 ? '—' : pct(m(j, 'cpu'), m(0, 'cpu'))} | ${m(j, 'wall').toFixed(3)} s | ${j === 0 ? '—' : pct(m(j, 'wall'), m(0, 'wall'))} | ${(m(j, 'tiny') * 1e6).toFixed(1)} µs | ${cost} | ${share} | ${m(j, 'command').toFixed(2)} s |`,
    );
  });
}

new Command('record-bench')
  .option('--runs <n>', 'runs per configuration (alternating)', '7')
  .option('--steps <n>', 'optimizer steps per run', '1000')
  .action(main)
  .parse();
