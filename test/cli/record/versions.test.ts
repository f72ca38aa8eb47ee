/**
 * The helper speaks each PyTorch version's memory-history API (1.13, 2.0, 2.1+) and counts optimizer
 * steps with the global post-step hook (2.0+) or the Optimizer.step wrapper (1.13, real torch here):
 * test/python/record/versions.py calls them against stand-in functions with those versions'
 * signatures and prints what was called.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

interface Calls {
  api: string;
  calls: string[];
}

const run = spawnSync('/usr/bin/python3', ['test/python/record/versions.py'], { encoding: 'utf8' });
const results = JSON.parse(run.status === 0 ? run.stdout : '{}') as Record<string, Calls> & {
  steps: { how: string; counted: string[] };
  global_hook: { how: string; counted: string[] };
};

describe('the helper on each PyTorch version', () => {
  it('runs', () => expect(run.stderr).toBe(''));

  it("2.1+: enabled='all' with context, stacks and max_entries; cleared by enabled=None and a restart", () => {
    const start = "record('all', context='all', max_entries=5000, stacks='python')";
    expect(results['2.1 python']).toEqual({
      api: '2.1',
      calls: [start, '-- clear', 'record(None, )', start, '-- dump', '_snapshot()'],
    });
    expect(results['2.1 all']!.calls[0]).toBe("record('all', context='all', max_entries=5000, stacks='all')");
  });

  it('2.0: the trace_alloc_* call (C++ frames for --stacks all), cleared by stopping and starting', () => {
    const start = (cpp: boolean) =>
      `record(True, record_context=True, trace_alloc_max_entries=5000, trace_alloc_record_context=True, record_context_cpp=${cpp ? 'True' : 'False'})`;
    expect(results['2.0 python']!.api).toBe('2.0');
    expect(results['2.0 python']!.calls).toEqual([
      start(false),
      '-- clear',
      'record(False, record_context=True, trace_alloc_max_entries=1, trace_alloc_record_context=False, record_context_cpp=False)',
      start(false),
      '-- dump',
      '_snapshot()',
    ]);
    expect(results['2.0 all']!.calls[0]).toBe(start(true));
  });

  it('1.13: record(True), block histories only, nothing to clear', () => {
    expect(results['1.13 python']).toEqual({
      api: '1.13',
      calls: ['record(True)', '-- clear', '-- dump', '_snapshot()'],
    });
  });

  it('counts each optimizer step once, a subclass calling its parent step included (1.13 wrapper)', () => {
    expect(results.steps).toEqual({
      how: 'Optimizer.step wrapper',
      counted: ['SGD', 'SGD', 'Clipped', 'Clipped', 'Adam', 'Adam'],
    });
  });

  it('uses the global post-step hook where the version has it', () => {
    expect(results.global_hook).toEqual({
      how: 'register_optimizer_step_post_hook',
      counted: ['the optimizer'],
    });
  });
});
