import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverRun, holdsSnapshots, isSnapshotName } from '../../../src/engine/run-layout/discover.js';
import { naturalCompare } from '../../../src/engine/run-layout/natural-order.js';
import { pickCell } from '../../../src/engine/run-layout/pick-cell.js';
import { snapshotsUnder } from '../../../src/node/files/expand-paths.js';

const brief = (paths: string[], mtimes?: number[], roots?: string[]) =>
  discoverRun(
    paths.map((path, i) => ({ path, mtimeMs: mtimes?.[i] })),
    { roots },
  ).cells.map((c) => `${c.kind} r${c.rank ?? '-'} s${c.steps ? `${c.steps.first}-${c.steps.last}` : '-'}`);

describe('run discovery: which rank, which step, which kind each file is', () => {
  it('verl: step windows, multi-step windows and OOM dumps, OOM after the window written before it', () => {
    const paths = [
      'out/step10/torch_memory_rank1_pid201.pickle',
      'out/oom_20251103-101500-123456/torch_memory_oom_rank1_pid201.pickle',
      'out/step2/torch_memory_rank0_pid200.pickle',
      'out/step2/torch_memory_rank1_pid201.pickle',
      'out/steps3-4/torch_memory_rank0_pid200.pickle',
    ];
    const run = discoverRun(paths.map((path, i) => ({ path, mtimeMs: [50, 60, 10, 11, 20][i] })));
    expect(run.layout).toBe('verl');
    expect(run.unplaced).toEqual([]);
    expect(run.cells.map((c) => c.path)).toEqual([paths[2], paths[3], paths[4], paths[0], paths[1]]);
    const oom = run.cells.at(-1)!;
    expect(oom).toMatchObject({
      kind: 'oom',
      rank: 1,
      pid: 201,
      stamp: '20251103-101500-123456',
      steps: null,
    });
    expect(run.cells[2]!.steps).toEqual({ first: 3, last: 4 });
    // Ranks dump a window at about the same time: an OOM written among them still follows them all.
    expect(brief([paths[2]!, paths[3]!, paths[1]!], [10, 30, 20])).toEqual([
      'step r0 s2-2',
      'step r1 s2-2',
      'oom r1 s-',
    ]);
    // With the OOM written before step 10's window, it goes between them.
    expect(brief([paths[0]!, paths[1]!, paths[4]!], [50, 30, 20])).toEqual([
      'step r0 s3-4',
      'oom r1 s-',
      'step r1 s10-10',
    ]);
  });

  it('torchtitan: iteration_<N> and the OOM exit dump of that iteration after it', () => {
    const run = discoverRun([
      'memory_snapshot/iteration_20_exit/rank0_memory_snapshot.pickle',
      'memory_snapshot/iteration_20/rank1_memory_snapshot.pickle',
      'memory_snapshot/iteration_10/rank0_memory_snapshot.pickle',
    ]);
    expect(run.layout).toBe('torchtitan');
    expect(run.cells.map((c) => `${c.kind}:${c.steps?.first}:${c.rank}`)).toEqual([
      'step:10:0',
      'step:20:1',
      'oom:20:0',
    ]);
  });

  it('names no producer writes today (older docs) are still placed by their rank and kind', () => {
    // The producers' own names are in run-layouts.test.ts.
    expect(brief(['t/rank3.12.memory_snapshot.pickle', 't/rank0.oom_snapshot.pickle'])).toEqual([
      'step r3 s12-12',
      'oom r0 s-',
    ]);
    expect(discoverRun(['oom_rank5.pickle']).cells[0]).toMatchObject({ kind: 'oom', rank: 5 });
    // A lone `<stem>_7` is no Megatron-Bridge rank (run-layouts.test.ts): nothing places it.
    expect(discoverRun(['memory_trace_7.pickle']).cells[0]).toMatchObject({ layout: 'names', rank: null });
  });

  it('other layouts: rank and step from names in natural order, gzip and JSON too, unplaced said', () => {
    const run = discoverRun([
      'run/iter10/snap_rank1.json.gz',
      'run/iter2/snap_rank1.pickle',
      'run/iter2/snap_rank0.pickle.gz',
      'run/final.pickle',
      'C:\\runs\\oom_dump\\rank2.pickle',
    ]);
    expect(run.layout).toBe('names');
    expect(run.cells.map((c) => c.path)).toEqual([
      'run/iter2/snap_rank0.pickle.gz',
      'run/iter2/snap_rank1.pickle',
      'run/iter10/snap_rank1.json.gz',
      'run/final.pickle',
      'C:\\runs\\oom_dump\\rank2.pickle',
    ]);
    expect(run.cells[4]).toMatchObject({ kind: 'oom', rank: 2 });
    expect(run.unplaced).toEqual(['run/final.pickle']);
  });

  it('reads ranks and steps only from folders at or below the root given', () => {
    const root = '/data/qwen_lora_rank16/run';
    const under = `${root}/oom_snapshot_x.pickle`;
    expect(discoverRun([under], { roots: [root] }).cells[0]).toMatchObject({ kind: 'oom', rank: null });
    expect(discoverRun([under], { roots: ['/data/qwen_lora_rank16/./x/../run/'] }).cells[0]!.rank).toBeNull();
    // The root's own name and those below it count.
    expect(
      brief(['runs/rank3/step_2/a.pickle', 'runs/rank3/step_4/a.pickle'], undefined, ['runs/rank3']),
    ).toEqual(['step r3 s2-2', 'step r3 s4-4']);
    // Its own name only where it is just a rank's or a step's folder, however the root is spelled.
    expect(brief(['/d/qwen_lora_rank16/run/oom_a.pickle'], undefined, ['/d/qwen_lora_rank16'])).toEqual([
      'oom r- s-',
    ]);
    expect(brief(['run/oom_a.pickle'], undefined, ['.'])).toEqual(['oom r- s-']);
    // Megatron-Bridge's numbered end dumps keep their ranks in such a folder.
    expect(
      brief(['/d/qwen_lora_rank16/snapshot_0.pickle', '/d/qwen_lora_rank16/snapshot_1.pickle'], undefined, [
        '/d/qwen_lora_rank16',
      ]),
    ).toEqual(['end r0 s-', 'end r1 s-']);
    // Files named one by one: the folders they share above their deepest common one do not count.
    expect(
      brief(['/d/qwen_lora_rank16/run/step_1/a.pickle', '/d/qwen_lora_rank16/run/step_2/a.pickle']),
    ).toEqual(['step r- s1-1', 'step r- s2-2']);
    expect(brief(['/d/qwen_lora_rank16/run/oom_a.pickle'])).toEqual(['oom r- s-']);
  });

  it('knows snapshot files by name, not manifests or pages', () => {
    expect(
      ['a.pickle', 'a.pkl', 'a.json', 'a.JSON.gz', 'rank0.1.memory_snapshot.pickle'].every(isSnapshotName),
    ).toBe(true);
    expect(['run.json', 'a.html', 'a.svg', 'a.pickle.tmp', 'x.memlens-12.tmp'].some(isSnapshotName)).toBe(
      false,
    );
  });

  it("skips what memlens record writes beside the snapshots: cycle graphs and the recorder's state", () => {
    expect(['step1', 'oom_20251103-101500-123456', 'memory_snapshot'].every(holdsSnapshots)).toBe(true);
    expect(['cycles', '.memlens'].some(holdsSnapshots)).toBe(false);
    const root = mkdtempSync(join(tmpdir(), 'memlens-discover-'));
    try {
      for (const f of [
        'step1/torch_memory_rank0_pid7.pickle',
        'cycles/rank0_pid7_gc1.json',
        '.memlens/proc_7.json',
        'run.json',
      ]) {
        mkdirSync(join(root, f, '..'), { recursive: true });
        writeFileSync(join(root, f), '{}');
      }
      expect(snapshotsUnder(root).map((p) => relative(root, p))).toEqual([
        'step1/torch_memory_rank0_pid7.pickle',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('orders names naturally', () => {
    expect(['step10', 'step2', 'step1'].sort(naturalCompare)).toEqual(['step1', 'step2', 'step10']);
    expect(naturalCompare('rank02', 'rank2')).toBeGreaterThan(0);
  });
});

describe("memlens record's folders", () => {
  const files = (root: string) =>
    ['step1', 'step2', 'exit_step2'].map((d) => `${root}/${d}/torch_memory_rank0_pid7.pickle`);

  it("carry verl's names, and are memlens record's where the folder holds its .memlens/ record", () => {
    const recorded = discoverRun([...files('rec'), ...files('verl')], {
      roots: ['rec', 'verl'],
      recorded: ['rec'],
    });
    const byPath = (p: string) => recorded.cells.find((c) => c.path === p)!;
    expect(files('rec').map((p) => [byPath(p).kind, byPath(p).layout])).toEqual([
      ['step', 'memlens-record'],
      ['step', 'memlens-record'],
      ['exit', 'memlens-record'],
    ]);
    // The exit dump's folder name is memlens record's own either way (layouts.ts).
    expect(files('verl').map((p) => [byPath(p).kind, byPath(p).layout])).toEqual([
      ['step', 'verl'],
      ['step', 'verl'],
      ['exit', 'memlens-record'],
    ]);
    expect(discoverRun(files('rec'), { roots: ['rec'], recorded: ['rec'] }).layout).toBe('memlens-record');
    expect(discoverRun(files('rec'), { roots: ['rec'] }).layout).toBe('verl');
  });
});

describe('picking the cells of a run to compare', () => {
  const run = discoverRun([
    'r/step1/torch_memory_rank0_pid1.pickle',
    'r/steps2-3/torch_memory_rank0_pid1.pickle',
    'r/step1/torch_memory_rank1_pid2.pickle',
  ]);
  it('finds the window of a rank that holds a step', () => {
    expect(pickCell(run, 0, 3)).toMatchObject({
      cell: { path: 'r/steps2-3/torch_memory_rank0_pid1.pickle' },
      note: null,
    });
    expect(pickCell(run, 1, 1)).toMatchObject({ cell: { path: 'r/step1/torch_memory_rank1_pid2.pickle' } });
  });
  it('says what the run has when it has no such window', () => {
    expect(pickCell(run, 1, 2)).toEqual({ error: 'has no window of rank 1 holding step 2 (its windows: 1)' });
    expect(pickCell(run, 4, 1)).toEqual({ error: 'has no step windows of rank 4 (ranks: 0, 1)' });
  });

  // torchft (torchtitan): one window per replica group, replica_<k>/ below the step folder.
  const ft = discoverRun([
    'ms/step_000000000005/replica_1/000000_step_5.pickle',
    'ms/step_000000000005/replica_0/000000_step_5.pickle',
    'ms/step_000000000010/replica_1/000000_step_10.pickle',
  ]);
  it('picks the replica asked for, and says which it took when none was asked for', () => {
    expect(pickCell(ft, 0, 5, 1)).toEqual({
      cell: expect.objectContaining({ path: 'ms/step_000000000005/replica_1/000000_step_5.pickle' }),
      note: null,
    });
    expect(pickCell(ft, 0, 5)).toEqual({
      cell: expect.objectContaining({ path: 'ms/step_000000000005/replica_0/000000_step_5.pickle' }),
      note: 'rank 0 at step 5 has replicas 0, 1: replica 0 is compared (give --replica K for another)',
    });
    expect(pickCell(ft, 0, 10)).toMatchObject({ cell: { replica: 1 }, note: null });
    expect(pickCell(ft, 0, 5, 2)).toEqual({ error: 'has no replica 2 of rank 0 (replicas: 0, 1)' });
  });
});
