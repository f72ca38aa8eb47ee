import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { writeGeneratedRun } from '../helpers/generated-run.js';

/**
 * A generated training run exported with Hive partitions (step=<first step>/rank=<rank>/), and
 * `memlens sql` over it answering growth by rank and step as `memlens run --json` reports it.
 */
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const work = mkdtempSync(join(tmpdir(), 'memlens-sql-run-'));
const cacheHome = join(work, 'cache');
afterAll(() => rmSync(work, { recursive: true, force: true }));

const MiB = 2 ** 20;
const root = join(work, 'run');
writeGeneratedRun(root, {
  ranks: 3,
  windows: 3,
  seed: 9,
  extraBuffer: { rank: 1, bytes: 64 * MiB, step: 2 },
  oom: { rank: 2, cause: 'fragmentation' },
});

function memlens(...args: string[]): string {
  return execFileSync('node', [...NODE_FLAGS, CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    maxBuffer: 64 * MiB,
  });
}

const GROWTH = `
  SELECT s.rank, s.step, s.kind, s.device, s.file,
         coalesce(sum(b.size) FILTER (WHERE b.state = 'active_allocated'), 0) AS allocated_bytes
  FROM snapshots s LEFT JOIN blocks b USING (snapshot, device)
  GROUP BY ALL ORDER BY s.rank, s.step NULLS LAST`;

interface Row {
  rank: number | null;
  step: number | null;
  kind: string;
  device: number;
  file: string;
  allocated_bytes: number;
}

function fromRunJson(): Row[] {
  const run = (
    JSON.parse(memlens('run', root, '--json')) as {
      runs: {
        snapshots: {
          file: string;
          step: number | null;
          rank: number | null;
          kind: string;
          devices: { device: number; allocated_bytes: number }[];
        }[];
      }[];
    }
  ).runs[0]!;
  return run.snapshots
    .flatMap((s) =>
      s.devices.map((d) => ({
        rank: s.rank,
        step: s.step,
        kind: s.kind,
        device: d.device,
        file: s.file,
        allocated_bytes: d.allocated_bytes,
      })),
    )
    .sort((a, b) => a.rank! - b.rank! || (a.step ?? Infinity) - (b.step ?? Infinity));
}

describe('a run exported with Hive partitions and queried with memlens sql', () => {
  const out = join(work, 'out');
  it('writes step=<n>/rank=<r>/ partitions under every table, an OOM dump under a null step', () => {
    memlens('export', root, '-o', out);
    const steps = readdirSync(join(out, 'events')).sort();
    expect(steps).toEqual(['step=1', 'step=2', 'step=3', 'step=__HIVE_DEFAULT_PARTITION__']);
    expect(readdirSync(join(out, 'blocks', 'step=2')).sort()).toEqual(['rank=0', 'rank=1', 'rank=2']);
    expect(readdirSync(join(out, 'blocks', 'step=__HIVE_DEFAULT_PARTITION__'))).toEqual(['rank=2']);
  });

  it('answers growth by rank and step as memlens run --json does', () => {
    const expected = fromRunJson();
    expect(expected.length).toBe(10);
    const got = JSON.parse(memlens('sql', GROWTH, out, '--format', 'json')) as Row[];
    expect(got).toEqual(expected);
    // The rank given an extra 64 MiB buffer from step 2 on stands out in the query's answer.
    const at = (rank: number, step: number) =>
      got.find((r) => r.rank === rank && r.step === step)!.allocated_bytes;
    expect(at(1, 2) - at(0, 2)).toBeGreaterThan(32 * MiB);
    expect(at(1, 1) - at(0, 1)).toBeLessThan(32 * MiB);
  });

  it('exports a run directory on first use into the cache and reuses it', () => {
    const direct = JSON.parse(memlens('sql', GROWTH, root, '--format', 'json')) as Row[];
    expect(direct).toEqual(fromRunJson());
    const cached = readdirSync(join(cacheHome, 'memlens', 'parquet'));
    expect(cached).toHaveLength(1);
    const dir = join(cacheHome, 'memlens', 'parquet', cached[0]!);
    const part = join(dir, 'events', 'step=1', 'rank=0', `part-0-0.parquet`);
    const made = statSync(part).mtimeMs;
    const used = statSync(join(dir, 'memlens-export.json')).mtimeMs;
    memlens('sql', 'SELECT count(*) FROM events', root);
    // Not exported again; marked as just used, so the cache's trimming keeps it longest.
    expect(statSync(part).mtimeMs).toBe(made);
    expect(statSync(join(dir, 'memlens-export.json')).mtimeMs).toBeGreaterThan(used);
  });

  it("the same files named one by one are another export: they never get the run's steps and ranks from the cache", () => {
    // In the run's own order, so that a key of the files alone would be the run's.
    const run = JSON.parse(memlens('run', root, '--json')) as { runs: { snapshots: { file: string }[] }[] };
    const files = run.runs[0]!.snapshots.map((x) => (x.file.startsWith('/') ? x.file : join(root, x.file)));
    const loose = memlens(
      'sql',
      'SELECT count(*) AS n FROM snapshots WHERE step IS NULL',
      ...files,
      '--format',
      'csv',
    );
    expect(loose).toBe(`n\n${files.length}\n`);
    const asRun = memlens(
      'sql',
      'SELECT count(*) AS n FROM snapshots WHERE step IS NULL',
      root,
      '--format',
      'csv',
    );
    expect(asRun).not.toBe(loose);
  });

  it('prints a table, CSV, and a one-line error for a bad query', () => {
    const text = memlens('sql', 'SELECT rank, count(*) AS n FROM snapshots GROUP BY rank ORDER BY rank', out);
    expect(text.split('\n').slice(0, 3)).toEqual(['rank  n', '----  -', '   0  3']);
    const csv = memlens('sql', 'SELECT DISTINCT kind FROM snapshots ORDER BY kind', out, '--format', 'csv');
    expect(csv).toBe('kind\noom\nstep\n');
    const bad = (() => {
      try {
        memlens('sql', 'SELECT nope FROM events', out);
        return '';
      } catch (e) {
        return String((e as { stderr: string }).stderr);
      }
    })();
    expect(bad).toMatch(/^memlens: sql: Binder Error: .*nope.*\n$/);
  });
});
