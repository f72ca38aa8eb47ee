/**
 * `memlens record --cycles --cycles-device cpu -- /usr/bin/python3 program.py` end to end (the
 * built CLI, its sitecustomize bootstrap, the observer in python/memlens/cycles.py): seed 001's
 * awaitable tensor with a view callback, leaked once per training step and collected every other
 * step. The program prints the same with and without memlens; each collection's graph is written
 * with the optimizer step it happened at.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCycleText } from '../../../src/engine/analyses/cycles/cycle-file.js';
import { PYTHON, recordProgram } from '../../helpers/record-run.js';

const PROGRAM = `
import gc, sys, torch

class AwaitableTensor:
    def __init__(self, tensor_size):
        self._tensor_size = tensor_size
        self._tensor = None

    def wait(self):
        self._tensor = torch.randn(self._tensor_size)
        return self._tensor

class AwaitableTensorWithViewCallback:
    def __init__(self, tensor_awaitable, view_dim):
        self._tensor_awaitable = tensor_awaitable
        self._view_dim = view_dim
        self._callback = lambda ret: ret.view(-1, self._view_dim)

    def wait(self):
        return self._callback(self._tensor_awaitable.wait())

weight = torch.nn.Parameter(torch.ones(4))
optimizer = torch.optim.SGD([weight], lr=0.1)
payload = object()
base = sys.getrefcount(payload)
gc.collect()  # what imports left behind (memlens's helper's own included)
gc.disable()
for step in range(1, 7):
    (weight * 2).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
    leak = AwaitableTensorWithViewCallback(AwaitableTensor((1, 512, 1024)), 1024)
    leak.payload = payload
    leak.wait()
    del leak
    if step % 2 == 0:
        found = gc.collect()
        print(f"step {step}: collected {found}, still held {sys.getrefcount(payload) - base}")
`;

describe('memlens record --cycles', () => {
  it("writes seed 001's cycle per collection, with its step, and leaves the program's output alone", () => {
    const plain = spawnSync(PYTHON, ['-c', PROGRAM], { encoding: 'utf8' });
    expect(plain.status).toBe(0);
    const r = recordProgram(PROGRAM, { recordArgs: ['--cycles', '--cycles-device', 'cpu'] });
    expect(r.result.status).toBe(0);
    expect(r.result.stdout).toBe(plain.stdout);
    expect(plain.stdout).toContain('step 6: collected');
    expect(plain.stdout).not.toMatch(/still held [1-9]/);

    const dir = join(r.out, 'cycles');
    const names = readdirSync(dir).sort();
    expect(names).toHaveLength(3);
    const graphs = names.map((n) => {
      expect(n).toMatch(/^rank0_pid\d+_gc\d+\.json$/);
      return parseCycleText(readFileSync(join(dir, n), 'utf8'));
    });
    expect(graphs.map((g) => g.step).sort()).toEqual([2, 4, 6]);
    for (const g of graphs) {
      expect(g.device).toBe('cpu');
      const tensors = g.nodes.filter((n) => n.tensor !== null);
      // Two steps' leaks per collection, 2 MiB each.
      expect(tensors.map((t) => [t.label, t.tensor?.bytes])).toEqual([
        ['Tensor float32[1, 512, 1024]', 2 * 1024 * 1024],
        ['Tensor float32[1, 512, 1024]', 2 * 1024 * 1024],
      ]);
      const types = g.cycle.map((id) => g.nodes.find((n) => n.id === id)?.type).sort();
      expect(types).toEqual([
        'AwaitableTensorWithViewCallback',
        'AwaitableTensorWithViewCallback',
        'cell',
        'cell',
        'function',
        'function',
      ]);
      const labels = new Set(g.edges.map((e) => `${e.label}(${e.kind})`));
      for (const hop of [
        '_callback(attribute)',
        '__closure__[0](closure)',
        'cell_contents(closure)',
        '_tensor_awaitable(attribute)',
        '_tensor(attribute)',
      ])
        expect(labels).toContain(hop);
    }
  });
});
