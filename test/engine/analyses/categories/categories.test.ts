import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import {
  CATEGORIES,
  labelAllocations,
  RULES,
} from '../../../../src/engine/analyses/categories/categories.js';
import { categoriesOf } from '../../../../src/engine/analyses/categories/category-curves.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { DeviceModel, Snapshot } from '../../../../src/engine/model/snapshot.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';
import { smallSegment } from '../../../helpers/small-segment.js';
import { snapshotOf } from '../../../helpers/snapshot-of.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const tmp = mkdtempSync(join(tmpdir(), 'memlens-categories-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

/**
 * Every allocated byte is in exactly one category: with one point per moment, the categories add
 * up to the allocated curve the model rebuilt on its own, at every moment, at the peak and at dump.
 */
function expectPartition(d: DeviceModel, s: Snapshot, where: string): void {
  const n = d.trace.length;
  const r = categoriesOf(s, d, n + 1);
  expect(r.curve.points, where).toBe(n + 1);
  const allocated = [d.totals.start.allocated, ...d.totals.allocated];
  const stacked = r.curve.first_entry.map((_, k) => sum(CATEGORIES.map((c) => r.curve.bytes[c][k]!)));
  expect(stacked, where).toEqual(allocated);
  expect(sum(r.categories.map((c) => c.dump_bytes)), where).toBe(d.totals.end.allocated);
  expect(sum(r.categories.map((c) => c.peak_bytes)), where).toBe(d.totals.peak.allocated);
  expect(sum(r.rules.map((x) => x.allocations)), where).toBe(d.allocations.count);
}

describe('a curve of fewer points', () => {
  it("each point is its bucket's largest figure per category, as one point per moment shows", () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 6000, seed: 9 }).bytes);
    const d = s.devices[0]!;
    const fine = categoriesOf(s, d, d.trace.length + 1).curve;
    for (const points of [1, 7, 100]) {
      const coarse = categoriesOf(s, d, points).curve;
      for (const c of CATEGORIES)
        coarse.first_entry.forEach((first, k) => {
          const moments = fine.bytes[c].slice(first + 1, coarse.last_entry[k]! + 2);
          expect(coarse.bytes[c][k], `${c} point ${k} of ${points}`).toBe(Math.max(...moments));
        });
    }
  });
});

describe.skipIf(corpus.length === 0)('categories on the corpus: a partition of the allocated bytes', () => {
  for (const file of corpus) {
    it(file, () => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) expectPartition(d, s, `${file} device ${d.device}`);
    });
  }

  it('reads real stacks: model.to() weights, AccumulateGrad grads, optimizer constructors, saved activations', () => {
    const rulesOf = (file: string): Set<string> => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      return new Set(categoriesOf(s, s.devices[0]!, 10).rules.map((r) => r.rule));
    };
    const decomfl = rulesOf('ZidongLiu_DeComFL__memory__edd30e0.pickle'); // Windows paths
    expect(decomfl.has('module-to-device')).toBe(true);
    const training = rulesOf(
      'Wedsonlin_assignment2__results_medium_128_training_memory_snapshot__87b0864.pickle',
    );
    for (const r of ['accumulate-grad', 'saved-for-backward', 'backward-freed', 'optimizer-freed'])
      expect(training.has(r), r).toBe(true);
    const megatron = rulesOf('THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle');
    expect(megatron.has('optimizer-init')).toBe(true);
    expect(megatron.has('module-init')).toBe(true);
  });
});

describe('categories on a generated training loop: the planted roles', () => {
  const { bytes } = generateSnapshotBytes({ events: 12000, seed: 61 });
  const s = loadSnapshotBytes(bytes);
  const d = s.devices[0]!;
  const a = d.allocations;
  const labels = labelAllocations(s, d);
  const category = (id: number): string => CATEGORIES[labels.category[id]!]!;
  const t = d.trace.timeUs;
  // The generator's loop, read from its annotations (not from stacks): parameters are moved to
  // the GPU before ProfilerStep#0 and kept; AdamW's state is created inside the first
  // Optimizer.step and kept; gradients are released inside Optimizer.zero_grad.
  const named = (prefix: string, stage: string) =>
    s.annotations.filter((x) => x.name.startsWith(prefix) && x.stage === stage).map((x) => x.timeUs);
  const firstStep = Math.min(...named('ProfilerStep#', 'START'));
  const [stepStart, stepEnd] = [named('Optimizer.step#', 'START')[0]!, named('Optimizer.step#', 'END')[0]!];
  const zeroGrad = named('Optimizer.zero_grad#', 'START').map((x, k) => [
    x,
    named('Optimizer.zero_grad#', 'END')[k]!,
  ]);
  const kept = (id: number) => a.freeRequested[id] === -1;

  it('has the loop it plants', () => {
    expect(zeroGrad.length).toBeGreaterThan(1);
    expect(stepEnd).toBeGreaterThan(stepStart);
  });

  it('parameters: allocated before the first step and kept', () => {
    const params = [...Array(a.count).keys()].filter(
      (id) => a.start[id]! >= 0 && t[a.start[id]!]! < firstStep && kept(id),
    );
    expect(params.length).toBeGreaterThan(10);
    expect(params.filter((id) => category(id) !== 'parameter')).toEqual([]);
  });

  it('optimizer state: created inside the first optimizer step and kept', () => {
    const state = [...Array(a.count).keys()].filter((id) => {
      const at = t[a.start[id]!]!;
      return a.start[id]! >= 0 && at >= stepStart && at <= stepEnd && kept(id);
    });
    expect(state.length).toBeGreaterThan(10);
    expect(state.filter((id) => category(id) !== 'optimizer_state')).toEqual([]);
  });

  it('gradients: released inside zero_grad', () => {
    const grads = [...Array(a.count).keys()].filter((id) => {
      const f = a.freeRequested[id]!;
      return f >= 0 && zeroGrad.some(([x, y]) => t[f]! >= x! && t[f]! <= y!);
    });
    expect(grads.length).toBeGreaterThan(10);
    expect(grads.filter((id) => category(id) !== 'gradient')).toEqual([]);
  });

  it('only the input batches are unknown (data is none of the categories), and activations dominate the peak', () => {
    const unknown = [...Array(a.count).keys()].filter((id) => category(id) === 'unknown');
    const fromGetBatch = (id: number) => s.stacks.frames(a.stack[id]!).some((f) => f.name === 'get_batch');
    expect(unknown.filter((id) => !fromGetBatch(id))).toEqual([]);
    const r = categoriesOf(s, d, 50);
    const at = Object.fromEntries(r.categories.map((c) => [c.category, c.peak_bytes]));
    expect(at.activation).toBeGreaterThan(at.temporary!);
    expect(at.activation).toBeGreaterThan(0);
    expectPartition(d, s, 'generated');
  });
});

describe('categories from annotations when the file has no stacks', () => {
  // A hand-made trace recorded without stacks: only record_function annotations and lifetimes
  // can tell. Planted: a weight before ProfilerStep#0, an optimizer state made inside
  // Optimizer.step, a gradient released inside zero_grad, a temporary freed at once.
  const base = 0x7f0000000000;
  const e = (action: string, addr: number, t: number) => ({ action, addr, size: 512, stream: 0, time_us: t });
  const trace = [
    e('alloc', base, 50), // weight
    e('alloc', base + 1024, 110), // temporary
    e('free_requested', base + 1024, 111),
    e('free_completed', base + 1024, 112),
    e('alloc', base + 512, 210), // optimizer state
    e('alloc', base + 1024, 290), // gradient
    e('free_requested', base + 1024, 310),
    e('free_completed', base + 1024, 311),
  ];
  const ann = (name: string, stage: string, t: number) => ({ name, stage, device: 0, time_us: t });
  const value = {
    segments: [
      smallSegment(base, [
        { state: 'active_allocated', requested: 512, size: 512 },
        { state: 'active_allocated', requested: 512, size: 512 },
      ]),
    ],
    device_traces: [trace],
    external_annotations: [
      ann('ProfilerStep#0', 'START', 100),
      ann('Optimizer.step#AdamW.step', 'START', 200),
      ann('Optimizer.step#AdamW.step', 'END', 220),
      ann('Optimizer.zero_grad#AdamW.zero_grad', 'START', 300),
      ann('Optimizer.zero_grad#AdamW.zero_grad', 'END', 320),
      ann('ProfilerStep#0', 'END', 400),
    ],
  };
  const s = snapshotOf(value);
  const d = s.devices[0]!;
  const labels = labelAllocations(s, d);
  const ruleAt = (entry: number) => RULES[labels.rule[d.allocations.ofEntry[entry]!]!]!;

  it('labels each planted allocation by the annotation rule', () => {
    expect(ruleAt(0).id).toBe('before-first-step');
    expect(ruleAt(1).id).toBe('short-lived');
    expect(ruleAt(4).id).toBe('optimizer-step-window');
    expect(ruleAt(5).id).toBe('zero-grad-window');
    expect([0, 1, 4, 5].map((i) => ruleAt(i).category)).toEqual([
      'parameter',
      'temporary',
      'optimizer_state',
      'gradient',
    ]);
    expectPartition(d, s, 'hand-made');
  });
});

describe('memlens categories (built CLI)', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });
  const input = join(tmp, 'in.pickle');
  writeFileSync(input, generateSnapshotBytes({ events: 3000, seed: 62 }).bytes);

  it('--json: categories, the rules that fired and a curve of exactly --points points', () => {
    const r = run(['categories', input, '--json', '--points', '40']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const dev = (JSON.parse(r.stdout) as { files: { devices: Record<string, unknown>[] }[] }).files[0]!
      .devices[0]! as {
      categories: { category: string }[];
      rules: { rule: string; allocations: number }[];
      curve: { points: number; first_entry: number[]; bytes: Record<string, number[]> };
    };
    expect(dev.categories.map((c) => c.category)).toEqual([...CATEGORIES]);
    expect(dev.rules.every((x) => RULES.some((y) => y.id === x.rule) && x.allocations > 0)).toBe(true);
    expect(dev.curve.points).toBe(40);
    expect(dev.curve.first_entry).toHaveLength(40);
    for (const c of CATEGORIES) expect(dev.curve.bytes[c]).toHaveLength(40);
  });

  it('text report names the rules', () => {
    const r = run(['categories', input]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('optimizer_state');
    expect(r.stdout).toMatch(/allocated\s+in\s+torch\.optim\s+_init_group/);
  });

  it('bad input: one line, exit 2', () => {
    const bad = join(tmp, 'bad.pickle');
    writeFileSync(bad, 'not a pickle at all');
    const r = run(['categories', bad]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(bad);
  });
});
