import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { awaitableCycle, cycleSnapshot, writeCycleFiles, writeCycleRun } from '../helpers/cycle-files.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const root = mkdtempSync(join(tmpdir(), 'memlens-cycles-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const recorded = writeCycleRun(root);
writeFileSync(join(root, 'run.json'), '{"command": ["python", "train.py"]}');

const memlens = (...args: string[]) =>
  spawnSync('node', [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', cwd: root });

interface Listed {
  file: string;
  rank: number;
  bytes: number;
  path_words: string;
  snapshot: { file: string; by: string } | null;
  snapshot_reason: string | null;
  tensors: {
    allocation: { id: number; alloc_entry: number; site: { name: string; line: number } | null } | null;
    allocation_reason: string | null;
    burst: { entry: number } | null;
  }[];
}

describe('memlens cycles', () => {
  it("lists every cycle of a run directory, each linked to its window's allocation and GC burst", () => {
    const r = memlens('cycles', root, '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const listed = (JSON.parse(r.stdout) as { cycles: Listed[] }).cycles;
    expect(listed).toHaveLength(recorded.cycles.length + recorded.unlinked.length);
    const byFile = new Map(listed.map((c) => [c.file, c]));
    // Both windows hold cycles: each is matched by the time its trace spans.
    expect(new Set(recorded.cycles.map((c) => c.window))).toEqual(new Set([0, 1]));
    for (const c of recorded.cycles) {
      const got = byFile.get(c.path)!;
      expect(got.snapshot).toEqual({ file: recorded.windows[c.window], by: 'time' });
      expect(got.bytes).toBe(c.bytes);
      expect(got.path_words).toMatch(/^AwaitableTensor\.value → Tensor \d/);
      if (c.allocatedInWindow)
        expect(got.tensors[0]!.allocation!.site).toMatchObject({ name: 'forward', line: 176 });
      else expect(got.tensors[0]!.allocation).toMatchObject({ alloc_entry: -1, site: null });
      expect(got.tensors[0]!.burst!.entry).toBeGreaterThan(0);
    }
    const [otherRank, cpu] = recorded.unlinked.map((p) => byFile.get(p)!);
    expect(otherRank!.snapshot_reason).toBe('no snapshot of rank 1 (ranks: 0)');
    expect(cpu!.snapshot_reason).toBe('no CUDA tensor: memory snapshots record CUDA memory only');
    expect(cpu!.tensors[0]!.allocation_reason).toBe('a cpu tensor: memory snapshots record CUDA memory only');
  });

  it('text: each cycle with its bytes, its path in words, its window, the site and the GC burst, within the width', () => {
    const [cycle, window] = [recorded.cycles[1]!.path, recorded.windows[0]!].map((p) => relative(root, p));
    const r = memlens('cycles', cycle!, window!);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.every((l) => l.length <= 100)).toBe(true);
    expect(r.stdout).toContain('rank 0, pid 4242, collection 2 (generation 2), step 8, at ');
    expect(r.stdout).toMatch(/held 2\.00 MiB in 1 tensor \(5 nodes, 4 on the cycle\)/);
    expect(r.stdout).toContain('AwaitableTensor.value → Tensor 2.00 MiB');
    expect(r.stdout).toContain(`snapshot ${window} (its trace spans the collection’s time)`);
    expect(r.stdout).toMatch(/allocated at forward \(.*model\.py:176\), entry [\d,]+/);
    expect(r.stdout).toMatch(
      /freed by the GC burst at entry [\d,]+ \([\d.]+ m?s into the trace\): 8 allocations, 20.0 MiB/,
    );
  });

  it("a collection no window's trace spans goes to the window naming its step, and says so", () => {
    const dir = mkdtempSync(join(tmpdir(), 'memlens-cycles-late-'));
    try {
      const late = awaitableCycle({ time_us: 4_000_000_000_000_000, step: 12, collection: 7 }, [
        { bytes: 4096, data_ptr: 4096 },
      ]);
      const [file] = writeCycleFiles(dir, [late]);
      const r = memlens('cycles', file!, root, '--json');
      expect(r.stderr).toBe('');
      const [got] = (JSON.parse(r.stdout) as { cycles: Listed[] }).cycles.filter((c) => c.file === file);
      expect(got!.snapshot).toEqual({ file: recorded.windows[1], by: 'step' });
      expect(got!.tensors[0]!.allocation_reason).toBe(
        'address 0x1000 is in no allocation of the trace or the dump',
      );
      // Wrapped to the width: read as one line.
      const text = memlens('cycles', file!, root).stdout.replace(/\s+/g, ' ');
      expect(text).toContain('its window names step 12, but its trace does not span the collection’s time');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad cycle file is one line naming it; the others are still listed', () => {
    const bad = join(root, 'cycles', 'rank0_pid4242_gc500.json');
    writeFileSync(bad, '{"memlens_cycles": 1, "rank": 0, "nodes": [');
    try {
      const r = memlens('cycles', join(root, 'cycles'));
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`memlens: ${bad}: not a memlens cycle file: invalid JSON (${jsonError()})\n`);
      expect(r.stdout.match(/^ {2}rank \d/gm)).toHaveLength(recorded.cycles.length + 2);
    } finally {
      rmSync(bad);
    }
    const missing = memlens('cycles', join(root, 'nope.json'), join(root, 'cycles'), '--json');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(`memlens: ${join(root, 'nope.json')}: no such file\n`);
    expect((JSON.parse(missing.stdout) as { cycles: unknown[] }).cycles).toHaveLength(
      recorded.cycles.length + recorded.unlinked.length,
    );
    const none = memlens('cycles', recorded.windows[0]!);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(
      /^memlens: .*: no cycle files \(cycles\/\*\.json, written by memlens record --cycles\)\n$/,
    );
    expect(relative(root, recorded.windows[0]!)).toBe('steps0-9/torch_memory_rank0_pid4242.pickle');
  });
});

function jsonError(): string {
  try {
    JSON.parse('{"memlens_cycles": 1, "rank": 0, "nodes": [');
  } catch (e) {
    return (e as Error).message;
  }
  return '';
}

describe('memlens cycles on what the Python observer writes (real gc, Debian torch CPU build, device cpu)', () => {
  const out = mkdtempSync(join(tmpdir(), 'memlens-cycles-real-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  it("reads seed 001's awaitable tensor and seed 003's graph nodes, bytes as the observer counted them", () => {
    const scenarios = ['awaitable_method', 'graph_nodes'];
    const py = spawnSync('/usr/bin/python3', ['test/python/cycles/scenarios.py', out, ...scenarios], {
      encoding: 'utf8',
    });
    expect(py.status, py.stderr).toBe(0);
    const r = spawnSync(
      'node',
      [...NODE_FLAGS, CLI, 'cycles', ...scenarios.map((s) => join(out, s)), '--json'],
      {
        encoding: 'utf8',
      },
    );
    expect(r.stderr).toBe('');
    const [awaitable, nodes] = (JSON.parse(r.stdout) as { cycles: (Listed & { device: string })[] }).cycles;
    const written = (c: Listed) => JSON.parse(readFileSync(c.file, 'utf8')) as { tensor_bytes: number };
    expect(awaitable!.path_words).toBe(
      'AwaitableTensorWithMethodCallback._tensor_awaitable → AwaitableTensor._tensor → Tensor 2.00 MiB',
    );
    expect(awaitable!.bytes).toBe(written(awaitable!).tensor_bytes);
    expect(nodes!.path_words).toBe('Value.inputs → list[0] → Value.cached_data → Tensor 1.00 KiB');
    expect(nodes!.tensors).toHaveLength(6);
    expect(nodes!.bytes).toBe(written(nodes!).tensor_bytes);
    expect(nodes!.device).toBe('cpu');
    expect(nodes!.snapshot_reason).toBe('no CUDA tensor: memory snapshots record CUDA memory only');
    // Text lists the largest tensors of a graph of many.
    const text = spawnSync('node', [...NODE_FLAGS, CLI, 'cycles', join(out, 'graph_nodes')], {
      encoding: 'utf8',
    });
    expect(text.stdout.match(/^ {4}tensor #/gm)).toHaveLength(5);
    expect(text.stdout).toContain('    … 1 more tensor (1.00 KiB; --json lists every one)\n');
  }, 60_000);
});

describe('memlens gc cites the recorded cycles', () => {
  interface GcJson {
    files: {
      file: string;
      devices: { bursts: { entry: number; cycles: { file: string; bytes: number }[] }[] }[];
    }[];
  }
  it("names for each burst the recorded cycles whose tensors it freed, in the run's windows", () => {
    const cycles = (JSON.parse(memlens('cycles', root, '--json').stdout) as { cycles: Listed[] }).cycles;
    const r = memlens('gc', root, '--json');
    expect(r.stderr).toBe('');
    const files = (JSON.parse(r.stdout) as GcJson).files;
    expect(files.map((f) => f.file)).toEqual(recorded.windows);
    const cited = files.flatMap((f) =>
      f.devices[0]!.bursts.flatMap((b) => b.cycles.map((c) => `${f.file} ${b.entry} ${c.file} ${c.bytes}`)),
    );
    const expected = cycles
      .filter((c) => c.tensors[0]!.burst !== null)
      .map((c) => `${c.snapshot!.file} ${c.tensors[0]!.burst!.entry} ${c.file} ${c.bytes}`);
    expect(expected).toHaveLength(recorded.cycles.length);
    expect(cited.sort()).toEqual(expected.sort());
  });

  it("a snapshot given with cycle files: its pattern's bursts say how many cycles they freed, and the first one's path", () => {
    const full = join(root, '..', `${relative(tmpdir(), root)}-full.pickle`);
    writeFileSync(full, cycleSnapshot().generated.bytes);
    try {
      const r = memlens('gc', full, ...recorded.cycles.map((c) => c.path));
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain(
        `    ${recorded.cycles.length} bursts of this pattern freed tensors of ${recorded.cycles.length} recorded cycles, the first:\n` +
          '      recorded cycle (rank 0, collection 1): AwaitableTensor.value → Tensor 2.00 MiB; freed here: 1\n' +
          '        tensor, 2.00 MiB\n',
      );
    } finally {
      rmSync(full);
    }
  });
});

describe('diagnosis cites the recorded cycles', () => {
  it("the GC finding names the cycle its largest burst freed, and counts the others'", () => {
    const r = memlens('diagnose', root, '--json');
    expect(r.stderr).toBe('');
    const files = (
      JSON.parse(r.stdout) as { files: { devices: { findings: { kind: string; evidence: string[] }[] }[] }[] }
    ).files;
    const gc = files[0]!.devices[0]!.findings.find((f) => f.kind === 'gc')!;
    expect(gc.evidence).toContain(
      'recorded cycle (rank 0, collection 1): AwaitableTensor.value → Tensor 2.00 MiB; freed here: 1 tensor, 2.00 MiB',
    );
    expect(gc.evidence).toContain('1 recorded cycle freed by the other bursts (memlens cycles lists them)');
    const alone = memlens('gc', recorded.cycles[0]!.path);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toBe(
      `memlens: ${recorded.cycles[0]!.path}: no snapshot among these (memlens cycles lists cycle files alone)\n`,
    );
  });
});
