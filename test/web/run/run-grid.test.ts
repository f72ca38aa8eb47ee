import { describe, expect, it } from 'vitest';
import { generateRun } from '../../../scripts/synth/run.js';
import { cellResult } from '../../../src/engine/analyses/run/cell-result.js';
import { columnOrder, runReport } from '../../../src/engine/analyses/run/index.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { discoverRun } from '../../../src/engine/run-layout/discover.js';
import { runGrid } from '../../../web/src/views/run/run-grid.js';

describe("the Run page's heatmap", () => {
  it("puts verl's post-update dump before its step's window, in the text table's order", () => {
    const files = generateRun({ ranks: 2, windows: 3, seed: 4 });
    const bytes = new Map(files.map((f) => [f.path, f.bytes]));
    // verl b178a3c ray_trainer.py:1700-1707: post_update_step<N> is written before step N runs.
    const extra = files
      .filter((f) => /step3\//.test(f.path))
      .map((f) => ({ path: f.path.replace('torch_memory_', 'post_update_step3_'), bytes: f.bytes }));
    expect(extra.length).toBeGreaterThan(0);
    for (const f of extra) bytes.set(f.path, f.bytes);
    const run = discoverRun([...bytes.keys()]);
    const snapshots = run.cells.map((cell) => ({
      cell,
      result: cellResult(loadSnapshotBytes(bytes.get(cell.path)!)),
    }));
    const report = runReport('run', run, snapshots);
    const columns = runGrid(report, 'allocated').columns.map((c) => c.key);
    expect(columns).toEqual(columnOrder(report.rows));
    const post = columns.findIndex((c) => /post/.test(c));
    expect(post).toBeGreaterThan(0);
    expect(columns[post + 1]).toMatch(/3/);
  });
});
