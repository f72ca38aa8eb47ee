import { describe, expect, it } from 'vitest';
import { renderRun } from '../../src/cli/commands/run-text.js';
import type { CellResult } from '../../src/engine/analyses/run/cell-result.js';
import { runReport } from '../../src/engine/analyses/run/run-report.js';
import { formatBytes } from '../../src/engine/base/format.js';
import { discoverRun } from '../../src/engine/run-layout/discover.js';

const GiB = 2 ** 30;

/** What a run needs of a file's device: its figures (the sites are not needed here). */
function device(n: number, allocated: number) {
  return {
    device: n,
    label: `cuda:${n}`,
    trace_entries: 10,
    allocated_bytes: allocated,
    trace_peak_allocated_bytes: allocated,
    reserved_bytes: allocated,
    trace_peak_reserved_bytes: allocated,
    inactive_split_bytes: 0,
    ooms: 0,
  };
}

const result = (...devices: ReturnType<typeof device>[]) =>
  ({ devices, side: { devices: [] }, ooms: [] }) as unknown as CellResult;

describe('run lanes: a file holding two devices', () => {
  it('shows each device on a line of its own, and the finding names and quotes that line', () => {
    const run = discoverRun([0, 1, 2].map((r) => `run/step1/torch_memory_rank${r}_pid${r + 10}.pickle`));
    const snapshots = run.cells.map((cell) => ({
      cell,
      result: result(device(0, 1 * GiB), device(1, cell.rank === 0 ? 5 * GiB : 1 * GiB)),
    }));
    const report = runReport('run', run, snapshots);
    const allocated = report.outliers.filter((o) => o.figure === 'allocated');
    expect(allocated.map((o) => [o.lane_label, o.value])).toEqual([['rank 0 cuda:1', 5 * GiB]]);
    const lines = renderRun(report, 100).split('\n');
    const table = lines.slice(lines.findIndex((l) => l.trim() === 'allocated at the dump'));
    expect(table.find((l) => l.trim().startsWith('rank 0 cuda:1'))).toContain(`${formatBytes(5 * GiB)}*`);
    expect(table.find((l) => l.trim().startsWith('rank 0 cuda:0'))).toContain(formatBytes(1 * GiB));
    // The finding's own line (the "worst first:" line above quotes it too).
    const finding = lines.filter((l) => l.includes('allocated at the dump 4.00 GiB above')).at(-1);
    expect(finding).toMatch(/^ {4}rank 0 cuda:1, step 1:/);
  });
});
