/**
 * The fixture programs recorded on a real GPU (fixtures/recorded/README.md: PyTorch 2.11 on an
 * H200, under memlens record's helper): what memlens finds in what PyTorch wrote, each figure
 * derived from the program (the sizes it allocates, the steps it runs), not from memlens's output.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const RECORDED = join(import.meta.dirname, '..', '..', 'fixtures', 'recorded');
const MiB = 2 ** 20;
const GiB = 2 ** 30;

function memlens(...args: string[]): string {
  const r = spawnSync('node', [...NODE_FLAGS, CLI, ...args], {
    cwd: RECORDED,
    encoding: 'utf8',
    env: { ...process.env, COLUMNS: '100' },
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}
const json = <T>(...args: string[]) => JSON.parse(memlens(...args, '--json')) as T;

interface Frame {
  filename: string;
  line: number;
  name: string;
}
interface Growth {
  frames: Frame[];
  bytes_per_step: number;
  ranks: { rank: number; first_step: number }[];
}
interface RunOom {
  file: string;
  after_step: number | null;
  in_step: number | null;
  also_in: string[];
  devices: { reports: { verdict: string; requested_bytes: number; device_free_bytes: number }[] }[];
}
interface Run {
  layout: string;
  growth: Growth[];
  ooms: RunOom[];
}
const run = (folder: string) => json<{ runs: Run[] }>('run', '--no-cache', folder).runs[0]!;
const site = (g: Growth) => `${g.frames[0]!.filename.split('/').at(-1)}:${g.frames[0]!.line}`;
/** Each growing site: file:line, bytes per step, and [rank, first step] of each lane. */
const growthRows = (r: Run) =>
  r.growth.map((g) => [site(g), g.bytes_per_step, g.ranks.map((x) => [x.rank, x.first_step])]);

describe('runs recorded by memlens record on an H200', () => {
  it('leak.py: the kept losses grow by their graph each step (2 × 64×2048 fp32 saved, the input, the loss)', () => {
    const r = run('leak');
    // Its .memlens/ record tells memlens record's step windows from verl's, whose names they share,
    // also where the folder given holds several recorded runs.
    expect(r.layout).toBe('memlens-record');
    expect(run('.').layout).toBe('memlens-record');
    expect(growthRows(r)).toEqual([
      ['leak.py:14', 2 * 64 * 2048 * 4 + 4, [[0, 1]]],
      ['leak.py:13', 64 * 2048 * 4, [[0, 1]]],
    ]);
  });

  it("leak.py: the exit dump's empty window is no advice to turn recording on (its blocks carry stacks)", () => {
    const text = memlens('diagnose', 'leak/exit_step20/torch_memory_rank0_pid499.pickle').replace(
      /\s+/g,
      ' ',
    );
    expect(text).toMatch(
      /Dump only: no trace recorded, .* Its blocks carry allocation stacks, so memory was being recorded/,
    );
    expect(text).not.toMatch(/record with torch\.cuda\.memory\._record_memory_history\(\)/);
  });

  it('two_ranks.py: rank 1 alone keeps a 1024×1024 fp32 buffer per step, from the window after step 3', () => {
    const r = run('two_ranks');
    expect(growthRows(r)).toEqual([['two_ranks.py:36', 1024 * 1024 * 4, [[1, 4]]]]);
  });

  it('oom.py: one OOM, named by its OOM dump, after step 15; the exit dump that holds it too is noted', () => {
    const r = run('oom');
    expect(r.ooms).toHaveLength(1);
    const [oom] = r.ooms;
    expect(oom!.file).toMatch(/^oom\/oom_[\d-]+\/torch_memory_oom_rank0_pid\d+\.pickle$/);
    expect([oom!.after_step, oom!.in_step]).toEqual([15, null]);
    expect(oom!.also_in).toEqual([expect.stringMatching(/^oom\/exit_step15\//)]);
    // The batch doubled from 64: the 16th step's 2^21 × 4096 fp32 activation is 32 GiB.
    expect(oom!.devices[0]!.reports.map((x) => [x.verdict, x.requested_bytes])).toEqual([
      ['exhaustion', 32 * GiB],
    ]);
  });

  it('oom.py: a request made in backward has no stack; the last stack before it is the loss.backward() line', () => {
    const text = memlens('oom', 'oom/exit_step15/torch_memory_rank0_pid559.pickle');
    expect(text).toMatch(/the failing request has no stack: the thread that asked ran no Python code/);
    const file = json<{
      files: { devices: { ooms: { stack: Frame[]; last_stack_before: { stack: Frame[] } | null }[] }[] }[];
    }>('oom', 'oom/exit_step15/torch_memory_rank0_pid559.pickle').files[0]!;
    const report = file.devices[0]!.ooms[0]!;
    expect(report.stack).toEqual([]);
    expect(report.last_stack_before!.stack[0]).toMatchObject({ name: '<module>', line: 21 });
    // diagnose's OOM finding (the web app's card too) says it among its first lines.
    expect(memlens('diagnose', 'oom/exit_step15/torch_memory_rank0_pid559.pickle')).toMatch(
      /· the request has no stack \(the thread that asked ran no Python code, as autograd's\s+backward threads do\); the last one before it: <module> \(…\/record\/oom\.py:21\)/,
    );
  });

  it('leak.py with a ring buffer of 200 entries and windows of 5 steps: the same growth, read from the dumps', () => {
    const r = run('leak_wrapped');
    expect(growthRows(r)).toEqual([
      ['leak.py:14', 2 * 64 * 2048 * 4 + 4, [[0, 5]]],
      ['leak.py:13', 64 * 2048 * 4, [[0, 5]]],
    ]);
  });

  it('leak.py with C++ stacks: each site named by user code, an autograd node or cuBLAS, never the allocator', () => {
    interface Peak {
      files: { devices: { groups: { frames: Frame[] }[] }[] }[];
    }
    const groups = json<Peak>('peak', 'leak_cpp/step3/torch_memory_rank0_pid523.pickle').files[0]!.devices[0]!
      .groups;
    const names = groups.map((g) => g.frames.map((f) => f.name).join(' ← '));
    expect(names.some((n) => /AddmmBackward0::apply/.test(n))).toBe(true);
    expect(names.some((n) => /^at::cuda::setWorkspaceForHandle/.test(n))).toBe(true);
    expect(
      groups.map((g) => g.frames[0]!.name).filter((n) => /CachingAllocator|c10::cuda::.*malloc/.test(n)),
    ).toEqual([]);
  });

  it('streams.py: two streams; frees whose allocs an earlier window holds are said as such', () => {
    interface Summary {
      files: { devices: { streams: string[]; warnings: string[] }[] }[];
    }
    const [d] = json<Summary>('summary', 'streams/step5/torch_memory_rank0_pid493.pickle').files[0]!.devices;
    expect(d!.streams).toHaveLength(2);
    expect(d!.warnings.join('\n')).toMatch(/as memlens record clears it at each window/);
  });

  it('GC bursts: the collector named only where it freed (zero_grad and a tiny unconfirmed burst do not lead)', () => {
    interface Diagnosis {
      files: { devices: { findings: { kind: string; headline: string }[] }[] }[];
    }
    const lead = (file: string) => json<Diagnosis>('diagnose', file).files[0]!.devices[0]!.findings[0]!;
    // memlens record's follow-up collection (--cycles) freed the cycles: the collector, confirmed.
    expect(lead('cycle/step11/torch_memory_rank0_pid529.pickle')).toMatchObject({
      kind: 'gc',
      headline: expect.stringMatching(/^Python's garbage collector freed long-lived tensors/),
    });
    // Gradients dropped by zero_grad(set_to_none=True): code, not the collector; no gc finding.
    const streams = json<Diagnosis>('diagnose', 'streams/step5/torch_memory_rank0_pid493.pickle');
    expect(streams.files[0]!.devices[0]!.findings.map((f) => f.kind)).not.toContain('gc');
    interface Gc {
      files: { devices: { bursts: { freed_by_code: string | null }[] }[] }[];
    }
    const [burst] = json<Gc>('gc', 'streams/step5/torch_memory_rank0_pid493.pickle').files[0]!.devices[0]!
      .bursts;
    expect(burst!.freed_by_code).toMatch(/zero_grad dropping the gradients/);
    // 256 KiB the stacks cannot tie to the collector: ranked by its bytes, after the peak.
    expect(lead('cycle/step12/torch_memory_rank0_pid529.pickle').kind).toBe('peak');
  });

  it('expandable.py: expandable segments, whose pages the allocator maps and unmaps', () => {
    interface Summary {
      files: {
        allocator_settings: { expandable_segments: boolean };
        devices: { expandable_segments: number; trace_actions: Record<string, number> }[];
      }[];
    }
    const files = json<Summary>(
      'summary',
      ...['step1', 'step5', 'step9'].map((s) => `expandable/${s}/torch_memory_rank0_pid589.pickle`),
    ).files;
    for (const f of files) {
      expect(f.allocator_settings.expandable_segments).toBe(true);
      expect(f.devices[0]!.expandable_segments).toBeGreaterThan(0);
    }
    const mapped = files.map((f) => f.devices[0]!.trace_actions.segment_map ?? 0);
    const unmapped = files.map((f) => f.devices[0]!.trace_actions.segment_unmap ?? 0);
    expect(mapped.every((n) => n > 0)).toBe(true);
    expect(unmapped.some((n) => n > 0)).toBe(true);
  });

  it('cycle.py: each gc.collect() frees the cycles of its steps, 4 MiB each (the first leaves the loop variable’s)', () => {
    interface Cycles {
      cycles: { step: number; bytes: number; tensors: unknown[]; snapshot: { file: string } | null }[];
    }
    const { cycles } = json<Cycles>('cycles', 'cycle');
    expect(cycles.map((c) => [c.step, c.tensors.length, c.bytes])).toEqual([
      [10, 9, 9 * 4 * MiB],
      [20, 10, 10 * 4 * MiB],
      [30, 10, 10 * 4 * MiB],
    ]);
    expect(cycles.map((c) => c.snapshot?.file)).toEqual([
      'cycle/step11/torch_memory_rank0_pid529.pickle',
      'cycle/step21/torch_memory_rank0_pid529.pickle',
      'cycle/exit_step30/torch_memory_rank0_pid529.pickle',
    ]);
    // All nine were allocated before the window began: said as such, not as a count of "lived".
    const gc = memlens('gc', 'cycle/step11/torch_memory_rank0_pid529.pickle');
    expect(gc).toMatch(/9 long-lived; they had lived since before the recorded window/);
    // Freed in memlens record's follow-up collection: named by the program's gc.collect() line.
    expect(gc).toMatch(/freed at <module> \(…\/record\/cycle\.py:42\)/);
  });
});
