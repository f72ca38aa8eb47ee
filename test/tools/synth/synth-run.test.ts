import { describe, expect, it } from 'vitest';
import { generateRun, RUN_LAYOUTS } from '../../../scripts/synth/run.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { BlockState } from '../../../src/engine/model/segments.js';
import { Action } from '../../../src/engine/model/trace-columns.js';
import { discoverRun } from '../../../src/engine/run-layout/discover.js';

const MiB = 2 ** 20;

describe('generated runs: one snapshot per rank and step window, and an OOM dump', () => {
  const files = generateRun({
    ranks: 3,
    windows: 4,
    extraBuffer: { rank: 2, bytes: 64 * MiB, step: 3 },
    growth: { rank: 1, bytes: 8 * MiB },
    oom: { rank: 0, cause: 'exhaustion' },
  });

  it('writes verl paths that run discovery places back at their rank and step', () => {
    expect(files).toHaveLength(3 * 4 + 1);
    const run = discoverRun(files.map((f) => f.path));
    expect(run.layout).toBe('verl');
    expect(run.unplaced).toEqual([]);
    for (const f of files) {
      const cell = run.cells.find((c) => c.path === f.path)!;
      expect(cell.rank).toBe(f.rank);
      expect(cell.kind).toBe(f.kind);
      if (f.kind === 'step') expect(cell.steps).toEqual({ first: f.steps[0], last: f.steps[1] });
    }
  });

  const dumpOf = (rank: number, step: number) => {
    const f = files.find((x) => x.rank === rank && x.kind === 'step' && x.steps[0] === step)!;
    const s = loadSnapshotBytes(f.bytes);
    return { s, d: s.devices.find((d) => d.device === rank)! };
  };

  it('plants the extra buffer on its rank from its step on, and growth window after window', () => {
    /** Live bytes at the dump whose stack passes through `name` (at `line`, when given). */
    const site = (rank: number, step: number, name: string, line?: number) => {
      const { s, d } = dumpOf(rank, step);
      const b = s.tables.blocks;
      let bytes = 0;
      for (let i = 0; i < b.length; i++) {
        const seg = s.tables.segments[b.segment[i]!]!;
        if (seg.device !== d.device || b.state[i] !== BlockState.allocated) continue;
        const frames = s.stacks.frames(b.stack[i]!);
        if (frames.some((f) => f.name === name && (line === undefined || f.line === line)))
          bytes += b.requestedSize[i]!;
      }
      return bytes;
    };
    expect(site(2, 2, 'allocate_rank_buffer')).toBe(0);
    expect(site(2, 3, 'allocate_rank_buffer')).toBe(64 * MiB);
    expect(site(2, 4, 'allocate_rank_buffer')).toBe(64 * MiB);
    expect(site(0, 4, 'allocate_rank_buffer')).toBe(0);
    const kept = [1, 2, 3, 4].map((step) => site(1, step, 'train_step', 218));
    expect(kept.slice(1).map((b, i) => b - kept[i]!)).toEqual([8 * MiB, 8 * MiB, 8 * MiB]);
    expect(site(0, 4, 'train_step', 218)).toBe(0);
  });

  it('the OOM dump holds the oom entry and the steps since the last window', () => {
    const oom = files.find((f) => f.kind === 'oom')!;
    expect(oom).toMatchObject({ rank: 0 });
    expect(oom.steps[0]).toBe(5);
    const s = loadSnapshotBytes(oom.bytes);
    const d = s.devices.find((x) => x.device === 0)!;
    const ooms = [...d.trace.action].filter((a) => a === Action.oom);
    expect(ooms).toHaveLength(1);
    expect(d.trace.action[d.trace.length - 1]).toBe(Action.oom);
    // The slicer keeps the annotations timed inside the window: step 5's START precedes its first entry.
    const named = new Set(s.annotations.filter((a) => a.name.startsWith('ProfilerStep#')).map((a) => a.name));
    expect([...named].sort()).toEqual(
      Array.from({ length: oom.steps[1] - 4 }, (_, i) => `ProfilerStep#${5 + i}`),
    );
  });
});

/**
 * Each layout as docs/producers.md's Run layouts says its producer names files today, read back by
 * run discovery: every snapshot placed with its rank, its step where the name carries one, and its
 * kind, under the layout's own rule.
 */
describe('generated runs in every producer layout', () => {
  /** The step a layout's names carry: a window's (torchtitan: its last step's folder), an OOM's where
   *  its folder names the step it died in (torchtitan's `_exit`); none in lmms-engine's, Megatron-Bridge's
   *  or composer's OOM names, nor in the time stamp of verl's (memlens record's) OOM folder. */
  const stepOf = (layout: string, f: { kind: string; steps: [number, number] }) => {
    if (f.kind === 'step') return { first: f.steps[0], last: f.steps[1] };
    if (f.kind === 'oom' && layout.startsWith('torchtitan')) return { first: f.steps[1], last: f.steps[1] };
    return null;
  };
  for (const layout of RUN_LAYOUTS)
    it(`${layout}: every snapshot placed with its rank, step and kind`, () => {
      const files = generateRun({
        ranks: 2,
        windows: 2,
        seed: 6,
        layout,
        oom: { rank: 1, cause: 'exhaustion' },
      });
      const run = discoverRun(files.map((f) => `run/${f.path}`));
      expect(run.layout).toBe(layout.startsWith('torchtitan') ? 'torchtitan' : layout);
      expect(run.unplaced).toEqual([]);
      const atEnd = layout === 'lmms-engine' || layout === 'megatron-bridge';
      expect(files.map((f) => f.kind).sort()).toEqual(
        atEnd ? ['end', 'end', 'oom'] : ['oom', 'step', 'step', 'step', 'step'],
      );
      for (const f of files) {
        const cell = run.cells.find((c) => c.path === `run/${f.path}`);
        expect(cell, f.path).toBeDefined();
        expect({ rank: cell!.rank, kind: cell!.kind, steps: cell!.steps }, f.path).toEqual({
          rank: f.rank,
          kind: f.kind,
          steps: stepOf(layout, f),
        });
      }
    });
});
