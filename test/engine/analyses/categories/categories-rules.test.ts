import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { categoriesOf } from '../../../../src/engine/analyses/categories/category-curves.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const FLEXGEN = 'Yiyi_LLM-inference__oom_snapshot__61261a2.pickle';
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

const categories = (file: string) => {
  const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
  return s.devices.filter((d) => d.allocations.count > 0).map((d) => categoriesOf(s, d, 10));
};

/**
 * Weight initialisation and loading are parameters, whatever program does them: FlexGen's
 * init_weight_list, Megatron's dist_checkpointing load (whose merge buffers are freed again,
 * so temporaries). Each category says which rules labelled it.
 */
describe.skipIf(corpus.length === 0)('categories: weight initialisation and loading', () => {
  it("FlexGen's OOM file: its weights (init_weight_list) are parameters, none unknown", () => {
    const [r] = categories(FLEXGEN);
    const byName = Object.fromEntries(r!.categories.map((c) => [c.category, c]));
    expect(byName.parameter!.dump_bytes).toBeGreaterThan(0);
    expect(byName.parameter!.rules).toEqual(['weight-init']);
    expect(byName.unknown!.dump_bytes).toBe(0);
    const rule = r!.rules.find((x) => x.rule === 'weight-init')!;
    expect(rule.bytes).toBe(byName.parameter!.max_bytes);
  });

  it('every FlexGen snapshot: init_weight allocations are parameters', () => {
    for (const file of corpus.filter((f) => f.startsWith('Yiyi_LLM-inference'))) {
      const [r] = categories(file);
      const param = r!.categories.find((c) => c.category === 'parameter')!;
      const unknown = r!.categories.find((c) => c.category === 'unknown')!;
      expect(param.rules, file).toContain('weight-init');
      expect(param.max_bytes, file).toBeGreaterThan(unknown.max_bytes);
    }
  });

  it("slime (Megatron): dist_checkpointing's merge buffers are load temporaries, nothing is unknown", () => {
    for (const file of corpus.filter((f) => f.startsWith('THUDM_slime'))) {
      const [r] = categories(file);
      expect(
        r!.rules.map((x) => x.rule),
        file,
      ).toContain('load-weights-freed');
      expect(
        r!.rules.map((x) => x.rule),
        file,
      ).not.toContain('no-rule');
      expect(r!.categories.find((c) => c.category === 'temporary')!.rules).toContain('load-weights-freed');
    }
  });

  it('memlens categories names the rule in the table and in the rules list', () => {
    const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'categories', join(CORPUS, FLEXGEN)], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.includes('│ parameter'))!;
    expect(row).toMatch(/11\.0 GiB.*│ weight-init +│/);
    expect(r.stdout).toMatch(
      /^ {2}weight-init +parameter +460 allocs +11\.0 GiB +allocated in a weight initialiser/m,
    );
  });
});
