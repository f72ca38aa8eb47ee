import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { blockTable, eventTable, selectRows } from '../../../../src/engine/views/tables/tables.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const EXAMPLE = join(import.meta.dirname, '..', '..', '..', '..', 'examples', 'example_snapshot.pickle');
const run = (...args: string[]) =>
  spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('event and block tables', () => {
  const s = loadSnapshotBytes(generateSnapshotBytes({ events: 3000, seed: 41 }).bytes);
  const d = s.devices[0]!;

  it('has one event row per trace entry, with the running totals after it', () => {
    const t = eventTable(s, d);
    expect(t.length).toBe(d.trace.length);
    const allocated = t.columns.indexOf('allocated_bytes');
    expect(t.cell(100, allocated)).toBe(d.totals.allocated[100]);
  });

  it('filters, sorts and limits to ranges without touching other rows', () => {
    const t = eventTable(s, d);
    const size = t.columns.indexOf('size');
    const rows = selectRows(t, {
      filter: ['action=alloc', 'size>=1048576'],
      sort: '-size',
      range: [500, 2500],
    });
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r).toBeGreaterThanOrEqual(500);
      expect(r).toBeLessThanOrEqual(2500);
      expect(t.cell(r, t.columns.indexOf('action'))).toBe('alloc');
      expect(t.cell(r, size) as number).toBeGreaterThanOrEqual(1048576);
    }
    for (let i = 1; i < rows.length; i++)
      expect(t.cell(rows[i - 1]!, size) as number).toBeGreaterThanOrEqual(t.cell(rows[i]!, size) as number);
  });

  it('has one block row per allocation, states that agree with the dump', () => {
    const t = blockTable(s, d);
    expect(t.length).toBe(d.allocations.count);
    const alive = selectRows(t, { filter: ['state!=freed'] });
    const dumpActive = [...s.tables.blocks.state].filter((x) => x === 0 || x === 1).length;
    expect(alive.length).toBe(dumpActive);
  });

  it('rejects a bad filter or column in one line', () => {
    const t = eventTable(s, d);
    expect(() => selectRows(t, { filter: ['size>>3'] })).toThrow(/bad filter|no column/);
    expect(() => selectRows(t, { sort: 'nope' })).toThrow(/no column 'nope'/);
  });
});

describe('memlens events / blocks', () => {
  it('streams CSV with a header and one line per entry', () => {
    const r = run('events', EXAMPLE);
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'device,id,action,address,size,stream,time_us,allocated_bytes,active_bytes,reserved_bytes,frame',
    );
    expect(lines).toHaveLength(2043 + 1);
  });

  it('writes JSON rows under files/devices, and fails cleanly on a bad filter', () => {
    const r = run('blocks', '--format', 'json', '--sort', '-size', '--limit', '2', EXAMPLE);
    const rows = JSON.parse(r.stdout).files[0].devices[0].rows;
    expect(rows).toHaveLength(2);
    expect(rows[0].size).toBeGreaterThanOrEqual(rows[1].size);
    const bad = run('events', '--filter', 'nope=1', EXAMPLE);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/no column 'nope'/);
  });
});

describe('memlens events into a slow pipe', () => {
  it('delivers every row when the reader lags (no output lost at exit)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memlens-pipe-'));
    const file = join(dir, 'big.pickle');
    writeFileSync(file, generateSnapshotBytes({ events: 60_000, seed: 42 }).bytes);
    const node = [process.execPath, ...NODE_FLAGS, CLI].map((a) => `'${a}'`).join(' ');
    // The reader sleeps first, so the CSV (~8 MB) must queue in the pipe and in Node.
    const r = spawnSync('sh', ['-c', `${node} events '${file}' | (sleep 1; wc -l)`], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(Number(r.stdout.trim())).toBe(60_000 + 1);
  });
});
