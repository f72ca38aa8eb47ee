import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { writeCycleRun } from '../helpers/cycle-files.js';
import { PLANTED_RUN, writeGeneratedRun } from '../helpers/generated-run.js';
import { CLI } from '../helpers/view-server.js';

/**
 * docs/json.md documents each command's --json as a tree of fields (```json-shape blocks). Every
 * field it names must appear in the command's real output on generated scenarios that exercise
 * it (an OOM, a leak, GC cycles, a second rank, a run with outliers), so a field that disappears
 * or is renamed fails here and the documentation cannot drift.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const DOC = join(ROOT, 'docs', 'json.md');
const EXAMPLE = join(ROOT, 'examples', 'example_snapshot.pickle');
const MiB = 2 ** 20;
/** memlens record puts its helper first on PYTHONPATH; the test-only CUDA stand-in goes after it. */
const STANDIN_ENV = `PYTHONPATH="$PYTHONPATH:${join(ROOT, 'test', 'record-standin')}"`;

/** Objects keyed by data (setting names, action names, categories): documented as `name{}`. */
const DATA_KEYED = ['allocator_settings', 'trace_actions', 'figures', 'curve.bytes'];

/** The shape of JSON documents as paths (`files[].devices[].device`), arrays and data maps marked. */
function shapePaths(docs: unknown[]): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) for (const e of v) walk(e, path);
    else if (v !== null && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        const at = path === '' ? k : `${path}.${k}`;
        const keyed = DATA_KEYED.some((d) => `.${at.replaceAll('[]', '')}`.endsWith(`.${d}`));
        const name =
          keyed && x !== null && typeof x === 'object' ? `${at}{}` : Array.isArray(x) ? `${at}[]` : at;
        out.add(name);
        if (!keyed) walk(x, name);
      }
  };
  for (const d of docs) walk(d, '');
  return out;
}

/** The documented trees of json.md, by command: indentation gives the nesting. */
function documentedPaths(markdown: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of markdown.matchAll(/^## `memlens (\w+)[^\n]*\n[\s\S]*?```json-shape\n([\s\S]*?)```/gm)) {
    const stack: string[] = [];
    const paths: string[] = [];
    for (const line of m[2]!.split('\n')) {
      const name = line.trim().split(/\s/)[0];
      if (!name) continue;
      const depth = (line.length - line.trimStart().length) / 2;
      stack.length = depth;
      stack.push(name);
      paths.push(stack.join('.'));
    }
    out.set(m[1]!, paths);
  }
  return out;
}

describe('docs/json.md matches the real --json output', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-docs-json-'));
  const file = (name: string) => join(dir, name);
  const memlens = (...args: string[]): unknown => JSON.parse(output(args));
  /** stdout; `check` exits 1 when a rule is broken, with its document printed all the same. */
  const output = (args: string[]): string => {
    try {
      return execFileSync(process.execPath, [...NODE_FLAGS, CLI, ...args], {
        encoding: 'utf8',
        maxBuffer: 256 * MiB,
        env: { ...process.env, XDG_CACHE_HOME: file('cache') },
      });
    } catch (e) {
      const failed = e as { status?: number; stdout?: string };
      if (args[0] === 'check' && failed.status === 1 && failed.stdout) return failed.stdout;
      throw e;
    }
  };
  /** Each command's invocations: together they fill every field the documentation names. */
  const invocations: Record<string, string[][]> = {
    summary: [['summary', EXAMPLE, file('oom.pickle'), '--json']],
    diagnose: [
      ['diagnose', EXAMPLE, file('oom.pickle'), file('leak.pickle'), file('cycles.pickle'), '--json'],
      // An OOM caused outside PyTorch, judged without the GPU's memory: its two readings.
      ['diagnose', file('outside.pickle'), '--json'],
    ],
    peak: [['peak', EXAMPLE, file('oom.pickle'), '--json']],
    events: [['events', EXAMPLE, '--limit', '3', '--json']],
    blocks: [['blocks', EXAMPLE, '--limit', '3', '--json']],
    oom: [
      ['oom', file('oom.pickle'), '--json'],
      ['oom', EXAMPLE, '--capacity', '80GiB', '--request', '2GiB', '--json'],
    ],
    leaks: [['leaks', file('leak.pickle'), '--range', '100:5000', '--json']],
    gc: [
      ['gc', file('cycles.pickle'), '--json'],
      ['gc', file('cycle-run'), '--json'],
    ],
    cycles: [['cycles', file('cycle-run'), '--json']],
    frag: [['frag', file('oom.pickle'), '--at', '100', '--json']],
    categories: [['categories', EXAMPLE, '--points', '5', '--json']],
    diff: [['diff', file('oom.pickle'), file('b.pickle'), '--json']],
    slice: [['slice', EXAMPLE, '--range', '0:100', '-o', file('slice.pickle'), '--json']],
    simulate: [['simulate', file('oom.pickle'), '--set', 'expandable_segments:True', '--sweep', '--json']],
    run: [['run', file('run'), '--json']],
    check: [
      ['check', file('check-run'), '--baseline', file('check-base'), '--no-oom', '--json'],
      ['check', file('oom.pickle'), '--max-fragmentation', '1%', '--json'],
    ],
    export: [['export', EXAMPLE, '-o', file('export'), '--json']],
    // Windows from the CUDA stand-in (test/record-standin), so files and dropped windows exist;
    // cycles on CPU; a failing stand-in dump for errors. The program's own stdout goes elsewhere.
    record: [
      [
        'record',
        '--out',
        file('recorded'),
        '--json',
        '--max-bytes',
        '2000',
        '--cycles',
        '--cycles-device',
        'cpu',
        '--',
        '/bin/sh',
        '-c',
        `${STANDIN_ENV} MEMLENS_STANDIN_LOG=${file('a.log')} exec /usr/bin/python3 ${file('cycles.py')} > /dev/null`,
      ],
      [
        'record',
        '--out',
        file('recorded-failing'),
        '--json',
        '--',
        '/bin/sh',
        '-c',
        `${STANDIN_ENV} MEMLENS_STANDIN_LOG=${file('b.log')} MEMLENS_STANDIN_DUMP_FAILS=1 exec /usr/bin/python3 -c "import torch; torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=1).step()" 2> /dev/null`,
      ],
    ],
  };

  beforeAll(() => {
    writeFileSync(
      file('oom.pickle'),
      generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes,
    );
    writeFileSync(
      file('b.pickle'),
      generateSnapshotBytes({ events: 3000, seed: 61, extraBuffer: 64 * MiB }).bytes,
    );
    writeFileSync(
      file('outside.pickle'),
      generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'outside' }).bytes,
    );
    writeFileSync(
      file('leak.pickle'),
      generateSnapshotBytes({ events: 20_000, seed: 41, leakBytes: 3 * MiB }).bytes,
    );
    writeFileSync(
      file('cycles.pickle'),
      generateSnapshotBytes({ events: 25_000, seed: 51, cycleBytes: [2 * MiB, 3 * MiB + 100], gcEvery: 4 })
        .bytes,
    );
    writeGeneratedRun(file('run'), PLANTED_RUN);
    // What run folders hold beside their snapshots (skipped[]), and a second dump in a cell (shared[]).
    writeFileSync(join(file('run'), 'training_config.json'), '{"lr": 0.0001}');
    copyFileSync(
      join(file('run'), 'step2', 'torch_memory_rank0_pid40000.pickle'),
      join(file('run'), 'step2', 'torch_memory_rank0_pid40009.pickle'),
    );
    // A buffer kept from step 3 on: check's baseline rules name its site, rank and step.
    const checkRun = { ranks: 2, windows: 5, seed: 8 };
    writeGeneratedRun(file('check-base'), checkRun);
    writeGeneratedRun(file('check-run'), {
      ...checkRun,
      extraBuffer: { rank: 1, bytes: 512 * MiB, step: 3 },
    });
    writeCycleRun(file('cycle-run'));
    // Optimizer steps on CPU tensors, each leaving a reference cycle that holds a tensor.
    writeFileSync(
      file('cycles.py'),
      'import gc, torch\nm = torch.nn.Linear(4, 4)\no = torch.optim.SGD(m.parameters(), lr=0.1)\n' +
        'for _ in range(6):\n    a = {"t": torch.ones(64)}\n    a["self"] = a\n' +
        '    m(torch.ones(1, 4)).sum().backward()\n    o.step()\n    del a\n    gc.collect()\n',
    );
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const documented = documentedPaths(readFileSync(DOC, 'utf8'));

  it('documents every command that has --json', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(invocations).sort());
  });

  for (const [command, runs] of Object.entries(invocations))
    it(`memlens ${command} --json has every field json.md names`, () => {
      const real = shapePaths(runs.map((args) => memlens(...args)));
      const missing = (documented.get(command) ?? []).filter((p) => !real.has(p));
      expect(missing, `documented in docs/json.md but not in the output of memlens ${command}`).toEqual([]);
    }, 60_000);

  it('fails on a field that is not in the output (the check can fail)', () => {
    const real = shapePaths([{ files: [{ file: 'a', devices: [{ device: 0 }] }] }]);
    expect(real.has('files[].devices[].device')).toBe(true);
    expect(real.has('files[].devices[].segments')).toBe(false);
  });
});
