import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { TABLE_NAMES, TABLES } from '../../src/engine/export/schema.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { CLI, scratchDir } from '../helpers/cli-scratch.js';

/** memlens export's CSV and JSON-lines tables, and how it treats an output directory and bad input. */
const work = scratchDir('memlens-export-cli');

const { bytes } = generateSnapshotBytes({ events: 3000, seed: 23, oomCause: 'fragmentation' });
const file = join(work, 'gen.pickle');
writeFileSync(file, bytes);
const model = loadSnapshotBytes(bytes);

function memlens(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync('node', [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });
}

describe('memlens export --format csv|jsonl', () => {
  it('writes every table with the schema header (CSV) or keys (JSON lines), one row per entry', () => {
    const csv = join(work, 'csv');
    const jsonl = join(work, 'jsonl');
    expect(memlens('export', file, '--format', 'csv', '-o', csv).status).toBe(0);
    expect(memlens('export', file, '--format', 'jsonl', '-o', jsonl).status).toBe(0);
    for (const table of TABLE_NAMES) {
      const header = readFileSync(join(csv, table, 'part-0-0.csv'), 'utf8').split('\n')[0];
      expect(header).toBe(TABLES[table].map((c) => c.name).join(','));
    }
    const lines = readFileSync(join(csv, 'events', 'part-0-0.csv'), 'utf8')
      .trimEnd()
      .split('\n');
    const trace = model.devices[0]!.trace;
    expect(lines.length - 1).toBe(trace.length);
    const rows = readFileSync(join(jsonl, 'events', 'part-0-0.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.length).toBe(trace.length);
    const totals = model.devices[0]!.totals;
    rows.forEach((r, i) => {
      expect(r.entry).toBe(i);
      expect(r.allocated_after).toBe(totals.allocated[i]);
      expect(r.reserved_after).toBe(totals.reserved[i]);
    });
    expect(rows.filter((r) => r.action === 'oom')).toHaveLength(1);
  });
});

describe('memlens export output directory', () => {
  it('refuses a non-empty directory without --force; --force replaces a previous export only', () => {
    const out = join(work, 'taken');
    mkdirSync(out);
    writeFileSync(join(out, 'keep.txt'), 'mine');
    const refused = memlens('export', file, '-o', out);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(`memlens: ${out} is not empty (use --force to replace it)\n`);
    expect(readdirSync(out)).toEqual(['keep.txt']);
    const forced = memlens('export', file, '-o', out, '--force');
    expect(forced.status).toBe(2);
    expect(forced.stderr).toBe(
      `memlens: ${out} is not empty and not a memlens export; --force replaces only a previous export (choose another -o)\n`,
    );
    expect(readdirSync(out)).toEqual(['keep.txt']);
    const previous = join(work, 'previous');
    expect(memlens('export', file, '-o', previous).status).toBe(0);
    expect(memlens('export', file, '-o', previous, '--format', 'jsonl', '--force').status).toBe(0);
    expect(readdirSync(previous).sort()).toEqual([...TABLE_NAMES, 'memlens-export.json'].sort());
    expect(readdirSync(join(previous, 'events'))).toEqual(['part-0-0.jsonl']);
  });

  it('never replaces an input: -o naming the run exported, an input file, or a folder holding one', () => {
    const run = join(work, 'run');
    mkdirSync(join(run, 'step1'), { recursive: true });
    const snap = join(run, 'step1', 'torch_memory_rank0_pid1.pickle');
    writeFileSync(snap, bytes);
    const cases: [string[], string][] = [
      [['export', run, '-o', run, '--force'], `${run}: the output is the input ${run}`],
      [['export', `${run}/`, '-o', run, '--force'], `${run}: the output is the input ${run}/`],
      [['export', snap, '-o', snap, '--force'], `${snap}: the output is the input ${snap}`],
      [['export', snap, '-o', run, '--force'], `${run}: the output holds the input ${snap}`],
      [
        ['export', run, '-o', join(run, 'out')],
        `${join(run, 'out')}: the output lies inside the input ${run}`,
      ],
      [['export', snap, '--format', 'perfetto', '-o', snap], `${snap}: the output is the input ${snap}`],
    ];
    for (const [args, message] of cases) {
      const r = memlens(...args);
      expect(r.stderr, args.join(' ')).toBe(`memlens: ${message}; choose another -o\n`);
      expect(r.status).toBe(2);
      expect(readFileSync(snap)).toEqual(Buffer.from(bytes));
      expect(readdirSync(run)).toEqual(['step1']);
    }
  });

  it('a bad file among good ones: a one-line error naming it, and no output at all', () => {
    const bad = join(work, 'bad.pickle');
    writeFileSync(bad, 'hello, not a pickle');
    const out = join(work, 'half');
    const r = memlens('export', file, bad, '-o', out);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^memlens: ${bad}: not a pickle[^\\n]*\\n$`));
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(work).filter((f) => f.includes('.memlens-'))).toEqual([]);
  });
});
