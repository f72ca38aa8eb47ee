import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { writeGeneratedRun } from '../helpers/generated-run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const CORPUS = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus');
const work = mkdtempSync(join(tmpdir(), 'memlens-run-'));
const cacheHome = join(work, 'cache');
afterAll(() => rmSync(work, { recursive: true, force: true }));

const MiB = 2 ** 20;
const root = join(work, 'run');
writeGeneratedRun(root, {
  ranks: 4,
  windows: 5,
  seed: 5,
  extraBuffer: { rank: 1, bytes: 256 * MiB, step: 3 },
  oom: { rank: 2, cause: 'fragmentation' },
});

function memlens(...args: string[]): string {
  return execFileSync('node', [...NODE_FLAGS, CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    maxBuffer: 256 * MiB,
  });
}

interface RunJson {
  runs: {
    root: string;
    layout: string;
    snapshots: {
      file: string;
      step: number | null;
      rank: number | null;
      kind: string;
      devices: { device: number }[];
    }[];
    outliers: {
      axis: string;
      figure: string;
      rank: number;
      steps: { first: number; last: number };
      blame: { frames: { name: string }[] }[];
    }[];
    growth: unknown[];
    ooms: { rank: number; after_step: number }[];
  }[];
}

describe('memlens run', () => {
  let first: RunJson;
  it('lays the run out by rank and step and finds the rank that stands out, from its step, by site', () => {
    first = JSON.parse(memlens('run', root, '--json')) as RunJson;
    const run = first.runs[0]!;
    expect(run.layout).toBe('verl');
    expect(run.snapshots.filter((s) => s.kind === 'step')).toHaveLength(20);
    const ranks = run.outliers.filter((o) => o.axis === 'ranks' && o.figure === 'allocated');
    expect(ranks.map((o) => [o.rank, o.steps.first, o.steps.last])).toEqual([[1, 3, 5]]);
    expect(ranks[0]!.blame[0]!.frames[0]!.name).toBe('allocate_rank_buffer');
    expect(run.growth).toEqual([]);
    expect(run.ooms).toMatchObject([{ rank: 2, after_step: 5 }]);
  });

  it('gives each snapshot the same device figures as summary --json of the file alone', () => {
    const s = first.runs[0]!.snapshots[6]!;
    const alone = JSON.parse(memlens('summary', s.file, '--device', String(s.rank), '--json')) as {
      files: { devices: unknown[] }[];
    };
    expect(s.devices).toEqual(alone.files[0]!.devices);
  });

  it('reopens from the cache with the same answer, and --no-cache leaves the cache alone', () => {
    const entries = readdirSync(join(cacheHome, 'memlens', 'cell-v5'));
    expect(entries.filter((f) => f.endsWith('.json') && f !== 'index.json')).toHaveLength(21);
    expect(JSON.parse(memlens('run', root, '--json'))).toEqual(first);
    rmSync(cacheHome, { recursive: true });
    expect(JSON.parse(memlens('run', root, '--json', '--no-cache'))).toEqual(first);
    expect(() => readdirSync(cacheHome)).toThrow();
  });

  it('takes corpus files of one job: each snapshot keeps the figures of the file alone', () => {
    const files = [
      'THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle',
      'THUDM_slime__scripts_0804_3_shapshot_init_model__dc9e311.pickle',
    ].map((f) => join(CORPUS, f));
    const run = (JSON.parse(memlens('run', ...files, '--json', '--no-cache')) as RunJson).runs[0]!;
    for (const s of run.snapshots) {
      const alone = JSON.parse(memlens('summary', s.file, '--json')) as {
        files: { devices: { device: number }[] }[];
      };
      const used = alone.files[0]!.devices.filter((d) => s.devices.some((x) => x.device === d.device));
      expect(s.devices).toEqual(used);
      expect(s.devices.length).toBeGreaterThan(0);
    }
  });

  it('prints the tables and findings as text', () => {
    const text = memlens('run', root);
    expect(text).toContain('4 ranks × 5 step windows, 1 OOM dump');
    expect(text).toMatch(/rank 1, steps 3–5: allocated at the dump 2[56]\d MiB above the median rank/);
    expect(text).toContain('allocate_rank_buffer');
    expect(text).toMatch(/rank 2 OOM after step 5: fragmentation/);
  });

  it('--json leads with the finding the text puts "worst first": the OOM, its dump and its request', () => {
    const lead = (first.runs[0] as unknown as { lead: Record<string, unknown> }).lead;
    const oom = first.runs[0]!.ooms[0] as unknown as {
      file: string;
      devices: { reports: { requested_bytes: number }[] }[];
    };
    expect(lead).toEqual({
      kind: 'oom',
      headline: expect.stringMatching(/^rank 2 OOM after step 5: fragmentation/),
      file: oom.file,
      stake_bytes: oom.devices[0]!.reports[0]!.requested_bytes,
    });
    // The text wraps the headline; joined back, it is the same sentence.
    const text = memlens('run', root).replace(/\n\s+/g, ' ');
    expect(text).toContain(`worst first: ${lead.headline}`);
  });

  it('diff compares two cells of a run: two ranks at a step, or two steps of a rank', () => {
    const ranks = JSON.parse(memlens('diff', root, '--ranks', '0,1', '--step', '4', '--json')) as {
      files: { file: string }[];
      devices: { at_dump: { sites: { delta_bytes: number; frames: { name: string }[] }[] } }[];
    };
    expect(ranks.files.map((f) => f.file.slice(root.length + 1))).toEqual([
      'step4/torch_memory_rank0_pid40000.pickle',
      'step4/torch_memory_rank1_pid40001.pickle',
    ]);
    const top = ranks.devices[0]!.at_dump.sites[0]!;
    expect(top.delta_bytes).toBe(256 * MiB);
    expect(top.frames[0]!.name).toBe('allocate_rank_buffer');
    const steps = JSON.parse(
      memlens('diff', root, '--steps', '2,4', '--rank', '1', '--json'),
    ) as typeof ranks;
    expect(steps.devices[0]!.at_dump.sites[0]).toMatchObject({ delta_bytes: 256 * MiB });
    const missing = spawnSync('node', [...NODE_FLAGS, CLI, 'diff', root, '--steps', '2,9', '--rank', '1'], {
      encoding: 'utf8',
    });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      `memlens: ${root}: has no window of rank 1 holding step 9 (its windows: 1, 2, 3, 4, 5)\n`,
    );
  });
});
