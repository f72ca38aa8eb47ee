/**
 * `memlens run` on folders laid out as the producers write them (src/engine/run-layout/layouts.ts cites
 * each source), with what people keep beside them: configs, Chrome traces, plots, links, sweep
 * folders, copies. Every snapshot is placed with its rank, step and kind; exit 0 when every
 * snapshot was read; what is left out is said.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateRun, type RunFile } from '../../scripts/synth/run.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { RunService } from '../../src/server/run-service.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const root = mkdtempSync(join(tmpdir(), 'memlens-layouts-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const MiB = 2 ** 20;

function put(path: string, bytes: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

const memlens = (...args: string[]) => spawnSync('node', [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });

interface JsonSnapshot {
  file: string;
  rank: number | null;
  step: number | null;
  replica: number | null;
  kind: string;
  tag: string | null;
  error?: string;
}
interface JsonRun {
  layout: string;
  snapshots: JsonSnapshot[];
  skipped: { path: string; reason: string }[];
  not_read: { path: string; reason: string }[];
  shared: { where: string; files: { file: string; lane: string }[] }[];
}

function runJson(dir: string): { status: number | null; run: JsonRun; stderr: string } {
  const r = memlens('run', dir, '--json', '--no-cache');
  return { status: r.status, run: (JSON.parse(r.stdout) as { runs: JsonRun[] }).runs[0]!, stderr: r.stderr };
}

const steps = (files: RunFile[], kind: RunFile['kind']) => files.filter((f) => f.kind === kind);

describe('run folders as their producers write them', () => {
  it('lmms-engine: rank-only dumps in the tables, its configs, tokenizer and profiler JSON skipped, exit 0', () => {
    const dir = join(root, 'lmms');
    const files = generateRun({ ranks: 2, windows: 2, seed: 3, oom: { rank: 1, cause: 'exhaustion' } });
    const last = steps(files, 'step').filter((f) => f.steps[1] === 2);
    for (const f of last)
      put(join(dir, 'memory_snapshot', `snapshot_train_end_rank${f.rank}.pickle`), f.bytes);
    const oom = steps(files, 'oom')[0]!;
    put(join(dir, 'memory_snapshot', 'snapshot_oom_observer_rank1_pid3001_1764300000.pickle'), oom.bytes);
    put(join(dir, 'training_config.json'), '{"output_dir": "out", "learning_rate": 0.0001}');
    put(join(dir, 'checkpoint-2', 'config.json'), '{"model_type": "qwen2_5_vl"}');
    put(join(dir, 'checkpoint-2', 'tokenizer.json'), '{"version": "1.0", "truncation": null}');
    put(join(dir, 'profiler', 'prof_start_0_end_5_rank_0.json'), '{"traceEvents": [], "schemaVersion": 1}');
    const text = memlens('run', dir, '--no-cache');
    expect(text.status).toBe(0);
    expect(text.stdout).not.toContain('0 ranks');
    expect(text.stdout).toContain('2 ranks, 2 dumps outside step windows, 1 OOM dump, 3 files');
    // A column of their own: the producer's reason names it, each rank a line with its figures.
    const table = text.stdout.split('\n');
    const head = table.find((l) => l.includes('train_end'))!;
    expect(head).toContain('OOM');
    for (const rank of [0, 1]) {
      const line = table.find((l) => l.trim().startsWith(`rank ${rank} `))!;
      expect(line).toMatch(/\d+(\.\d+)? [KMG]iB/);
    }
    expect(text.stderr.trim()).toBe(
      `memlens: ${dir}: skipped 4 files that are not snapshots (--verbose lists them)`,
    );
    const verbose = memlens('run', dir, '--no-cache', '--verbose');
    expect(verbose.stdout).toContain(
      `skipped ${join(dir, 'profiler', 'prof_start_0_end_5_rank_0.json')}: a Chrome trace`,
    );
    const { run, status } = runJson(dir);
    expect(status).toBe(0);
    expect(run.layout).toBe('lmms-engine');
    expect(run.snapshots.map((s) => `${s.kind} ${s.tag} rank ${s.rank} step ${s.step}`)).toEqual([
      'end train_end rank 0 step null',
      'end train_end rank 1 step null',
      'oom oom_observer rank 1 step null',
    ]);
    expect(run.skipped.map((s) => s.path.slice(dir.length + 1)).sort()).toEqual([
      'checkpoint-2/config.json',
      'checkpoint-2/tokenizer.json',
      'profiler/prof_start_0_end_5_rank_0.json',
      'training_config.json',
    ]);
  });

  it('composer: snapshots beside their .html plots, Chrome traces and OOM plots; gzip too; exit 0', () => {
    const dir = join(root, 'composer');
    const files = generateRun({
      ranks: 2,
      windows: 3,
      seed: 4,
      layout: 'composer',
      oom: { rank: 0, cause: 'exhaustion' },
    });
    for (const f of files) {
      const p = join(dir, f.path);
      put(
        f.rank === 1 && f.kind === 'step' ? `${p}.gz` : p,
        f.rank === 1 && f.kind === 'step' ? gzipSync(f.bytes) : f.bytes,
      );
      if (f.kind === 'step') {
        put(p.replace(/\.pickle$/, '.html'), '<html></html>');
        put(join(dir, 'torch_traces', `rank${f.rank}.${f.steps[1]}.pt.trace.json`), '{"traceEvents": []}');
      }
    }
    for (const suffix of [
      '_trace_plot.html',
      '_segment_plot.html',
      '_segment_flamegraph.svg',
      '_memory_flamegraph.svg',
    ])
      put(join(dir, 'torch_traces', `rank0_oom${suffix}`), '<svg/>');
    const { run, status, stderr } = runJson(dir);
    expect(status).toBe(0);
    expect(run.layout).toBe('composer');
    expect(run.snapshots.map((s) => `${s.kind} rank ${s.rank} step ${s.step}`)).toEqual([
      'step rank 0 step 1',
      'step rank 1 step 1',
      'step rank 0 step 2',
      'step rank 1 step 2',
      'step rank 0 step 3',
      'step rank 1 step 3',
      'oom rank 0 step null',
    ]);
    expect(run.snapshots.every((s) => s.error === undefined)).toBe(true);
    expect(run.skipped).toHaveLength(6 + 6 + 4);
    expect(stderr).toContain('skipped 16 files that are not snapshots');
  });

  it('torchft in a sweep ten folders deep: two replicas are two sets of lines, never merged', () => {
    const sweep = join(root, 'sweep');
    const deep = join(
      sweep,
      'lr_1e-4',
      'seed_3',
      'outputs',
      '2026-11-28',
      'run_a',
      'profiling',
      'memory_snapshot',
    );
    for (const replica of [0, 1]) {
      const files = generateRun({ ranks: 2, windows: 3, seed: 5 + replica, layout: 'torchtitan' });
      for (const f of files) {
        const [, stepDir, name] = /memory_snapshot\/([^/]+)\/(.+)$/.exec(f.path)!;
        put(join(deep, stepDir!, `replica_${replica}`, name!), f.bytes);
      }
    }
    const { run, status } = runJson(sweep);
    expect(status).toBe(0);
    expect(run.layout).toBe('torchtitan');
    expect(run.snapshots).toHaveLength(12);
    expect(
      run.snapshots.filter((s) => s.step === 2).map((s) => `replica ${s.replica} rank ${s.rank}`),
    ).toEqual(['replica 0 rank 0', 'replica 0 rank 1', 'replica 1 rank 0', 'replica 1 rank 1']);
    expect(run.shared).toEqual([]);
    const text = memlens('run', sweep, '--no-cache').stdout;
    expect(text).toContain('4 ranks × 3 step windows');
    for (const lane of ['r0 rank 0', 'r0 rank 1', 'r1 rank 0', 'r1 rank 1'])
      expect(text.split('\n').filter((l) => l.trim().startsWith(`${lane} `))).toHaveLength(2);
  });

  it('two dumps in one cell: both shown, each a line of its own, the finding quoting the line it names', () => {
    const dir = join(root, 'dup');
    const files = generateRun({ ranks: 4, windows: 3, seed: 6 });
    for (const f of files) put(join(dir, f.path), f.bytes);
    // A second process of rank 0 wrote into step2/ too, on the same GPU, holding an extra buffer.
    const planted = generateRun({
      ranks: 4,
      windows: 3,
      seed: 6,
      extraBuffer: { rank: 0, bytes: 768 * MiB, step: 2 },
    });
    const copy = planted.find((f) => f.rank === 0 && f.steps[0] === 2)!;
    const second = join(dir, 'step2', 'torch_memory_rank0_pid999.pickle');
    put(second, copy.bytes);
    // And a link to a file of the run is the same file, not a second dump.
    symlinkSync(join(dir, 'step1', 'torch_memory_rank0_pid40000.pickle'), join(dir, 'step1', 'again.pickle'));
    const { run, status } = runJson(dir);
    expect(status).toBe(0);
    expect(run.shared).toEqual([
      {
        where: 'rank 0, step 2',
        files: [
          { file: join(dir, 'step2', 'torch_memory_rank0_pid40000.pickle'), lane: 'rank 0' },
          { file: second, lane: 'rank 0 #2' },
        ],
      },
    ]);
    expect(run.skipped.map((s) => s.reason)).toEqual([
      `the same file as ${join(dir, 'step1', 'torch_memory_rank0_pid40000.pickle')}`,
    ]);
    const text = memlens('run', dir, '--no-cache').stdout;
    const lines = text.split('\n');
    // The finding's own line (the "worst first:" line above quotes it too, wrapped).
    const finding = lines.filter((l) => l.includes('rank 0 #2, step 2: allocated at the dump')).at(-1)!;
    expect(finding).toBeDefined();
    // The figure the finding quotes is the one its line of the table shows.
    const quoted = /\(([\d.]+ [KMG]iB) vs/.exec(finding)![1]!;
    const allocated = lines.slice(lines.findIndex((l) => l.trim() === 'allocated at the dump'));
    const row = allocated.find((l) => l.trim().startsWith('rank 0 #2'))!;
    expect(row).toContain(`${quoted}*`);
    expect(text).toContain(
      `rank 0, step 2 holds 2 dumps: ${join(dir, 'step2', 'torch_memory_rank0_pid40000.pickle')} (rank 0), ${second} (rank 0 #2)`,
    );
  });

  it('an unreadable part of a run is named the same way by run, report and view', async () => {
    const dir = join(root, 'unreadable');
    const files = generateRun({ ranks: 2, windows: 2, seed: 7 });
    for (const f of files) put(join(dir, f.path), f.bytes);
    // Unreadable even as root (tests run as root, where chmod 000 changes nothing): a link to itself.
    const loop = join(dir, 'step9');
    symlinkSync(loop, loop);
    const line = `memlens: ${loop}: not read: ELOOP: too many symbolic links encountered`;
    const run = memlens('run', dir, '--no-cache');
    expect(run.status).toBe(2);
    expect(run.stderr.split('\n')).toContain(line);
    expect(run.stdout).toContain(`not read (1):\n    ${loop}: ELOOP`);
    const report = memlens('report', dir, '-o', join(root, 'unreadable.html'));
    expect(report.status).toBe(2);
    expect(report.stderr.split('\n')).toContain(line);
    // `memlens view DIR` serves the run and says it as it starts reading it.
    const view = spawn('node', [...NODE_FLAGS, CLI, 'view', dir, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let viewErr = '';
    view.stderr.on('data', (d: Buffer) => {
      viewErr += d.toString();
    });
    try {
      await vi.waitFor(() => expect(viewErr.split('\n')).toContain(line), { timeout: 20_000, interval: 100 });
    } finally {
      view.kill();
    }
    // The same service behind it, in this process: the page's report names it too.
    const said: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
      said.push(String(s));
      return true;
    });
    try {
      const service = new RunService([dir], [], []);
      await service.start();
      expect(service.state().report!.not_read).toEqual([
        { path: loop, reason: expect.stringMatching(/^ELOOP/) },
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(said.join('').split('\n')).toContain(line);
  });

  it.skipIf(process.getuid?.() === 0)(
    'an unreadable subfolder (chmod 000, as a user) is named and the rest read',
    () => {
      const dir = join(root, 'locked');
      const files = generateRun({ ranks: 2, windows: 2, seed: 8 });
      for (const f of files) put(join(dir, f.path), f.bytes);
      const locked = join(dir, 'step2');
      spawnSync('chmod', ['000', locked]);
      try {
        const r = memlens('run', dir, '--no-cache');
        expect(r.status).toBe(2);
        expect(r.stderr).toContain(`memlens: ${locked}: not read: EACCES: permission denied`);
      } finally {
        spawnSync('chmod', ['755', locked]);
      }
    },
  );

  it('a folder above the run names no rank: qwen_lora_rank16/run/ holds no rank 16, given or walked into', async () => {
    const above = join(root, 'qwen_lora_rank16');
    const dir = join(above, 'run');
    const files = generateRun({ ranks: 1, windows: 2, seed: 6, oom: { rank: 0, cause: 'exhaustion' } });
    const oom = steps(files, 'oom')[0]!;
    put(join(dir, 'oom_snapshot_a.pickle'), oom.bytes);
    put(join(dir, 'step_2', 'snap.pickle'), steps(files, 'step')[0]!.bytes);
    // A dump with no step goes where its time puts it: the OOM came last.
    const later = Date.now() / 1000 + 60;
    utimesSync(join(dir, 'oom_snapshot_a.pickle'), later, later);
    const placed = (r: JsonRun) => r.snapshots.map((s) => `${s.kind} rank ${s.rank} step ${s.step}`);
    expect(placed(runJson(dir).run)).toEqual(['step rank null step 2', 'oom rank null step null']);
    // Given itself, its name counts only where it is just a rank's (`rank16/`): not this one's.
    expect(placed(runJson(above).run)).toEqual(['step rank null step 2', 'oom rank null step null']);
    const rankFolder = join(root, 'rank16');
    put(join(rankFolder, 'oom_snapshot_a.pickle'), oom.bytes);
    expect(placed(runJson(rankFolder).run)).toEqual(['oom rank 16 step null']);
    // Files named one by one: only the folders below the one they share.
    const loose = memlens(
      'run',
      join(dir, 'oom_snapshot_a.pickle'),
      join(dir, 'step_2', 'snap.pickle'),
      '--json',
    );
    expect(placed((JSON.parse(loose.stdout) as { runs: JsonRun[] }).runs[0]!)).toEqual([
      'step rank null step 2',
      'oom rank null step null',
    ]);
    // memlens view DIR places them the same way.
    const service = new RunService([dir], [], []);
    await service.start();
    expect(service.state().report!.snapshots.map((s) => s.rank)).toEqual([null, null]);
    expect(service.files.map((f) => f.label)).toEqual(['step 2', 'OOM']);
    service.close();
  });
});
