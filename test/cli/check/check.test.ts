import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { npuSnapshotBytes } from '../../../scripts/synth/npu.js';
import type { CheckResult, RuleResult } from '../../../src/engine/analyses/check/check.js';
import { formatBytes } from '../../../src/engine/base/format.js';
import { NODE_FLAGS } from '../../../src/node/node-flags.js';
import { writeGeneratedRun } from '../../helpers/generated-run.js';
import { inShell, memlensOnPath, printedCommands } from '../../helpers/printed-commands.js';
import { smallSegment } from '../../helpers/small-segment.js';

const CLI = join(import.meta.dirname, '..', '..', '..', 'dist', 'cli', 'main.js');
const MiB = 2 ** 20;
const work = mkdtempSync(join(tmpdir(), 'memlens-check-'));
const at = (name: string) => join(work, name);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The CLI in `work` (its pyproject.toml, when a test writes one, is the nearest). */
function memlens(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'check', ...args], {
    cwd: work,
    encoding: 'utf8',
    env: { ...process.env, GITHUB_ACTIONS: '', XDG_CACHE_HOME: at('cache'), ...env },
    maxBuffer: 64 * MiB,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(args: string[]): { code: number | null; result: CheckResult } {
  const r = memlens([...args, '--format', 'json']);
  return { code: r.code, result: JSON.parse(r.stdout) as CheckResult };
}

const rule = (r: CheckResult, name: string): RuleResult => r.rules.find((x) => x.rule === name)!;
const innermost = (x: RuleResult) => x.sites[0]?.frames[0];

let planted: { site: { filename: string; line: number; name: string }; bytes: number };
/** The tooth of the planted comb (oom-plant.ts): one segment of 5 teeth, the 2nd and 4th freed. */
let tooth: number;

beforeAll(() => {
  const base = { events: 4000, seed: 71, streams: 1 };
  writeFileSync(at('a.pickle'), generateSnapshotBytes(base).bytes);
  // Smaller than the largest sites at the peak: only a diff against the baseline puts it first.
  const b = generateSnapshotBytes({ ...base, extraBuffer: 256 * MiB });
  planted = b.expected.extra_buffer!;
  writeFileSync(at('b.pickle'), b.bytes);
  writeFileSync(
    at('leak.pickle'),
    generateSnapshotBytes({ events: 20_000, seed: 71, leakBytes: 16 * MiB }).bytes,
  );
  writeFileSync(at('oom.pickle'), generateSnapshotBytes({ ...base, oomCause: 'exhaustion' }).bytes);
  const frag = generateSnapshotBytes({ ...base, oomCause: 'fragmentation' });
  tooth = frag.expected.oom_causes![0]!.largest_free_block;
  writeFileSync(at('frag.pickle'), frag.bytes);
  const run = { ranks: 2, windows: 4, seed: 8 };
  writeGeneratedRun(at('clean'), run);
  writeGeneratedRun(at('extra'), { ...run, extraBuffer: { rank: 1, bytes: 512 * MiB, step: 3 } });
  writeGeneratedRun(at('growth'), { ...run, growth: { rank: 1, bytes: 16 * MiB } });
  writeGeneratedRun(at('oom-run'), { ...run, oom: { rank: 0, cause: 'exhaustion' } });
  writeGeneratedRun(at('frag-run'), { ...run, oom: { rank: 1, cause: 'fragmentation' } });
  writeGeneratedRun(at('growth64'), { ...run, growth: { rank: 1, bytes: 64 * MiB } });
  writeGeneratedRun(at('short'), { ...run, windows: 3 });
  // Two more ranks than the baseline's run, the last keeping 4 GiB more than any rank there peaked at.
  writeGeneratedRun(at('wider'), { ...run, ranks: 4, extraBuffer: { rank: 3, bytes: 4096 * MiB, step: 1 } });
  // Seed 11: rank 1 peaks higher in steps 1-2 than after, so a buffer kept from step 3 stays below its peak.
  writeGeneratedRun(at('quiet'), { ...run, seed: 11 });
  writeGeneratedRun(at('quiet-extra'), {
    ...run,
    seed: 11,
    extraBuffer: { rank: 1, bytes: 128 * MiB, step: 3 },
  });
  // Dumps with no allocation history: none recorded, or a ring buffer that kept only the dump's marker.
  const segment = smallSegment(0x7f00_0000_0000, [{ state: 'active_allocated', requested: MiB, size: MiB }]);
  const marker = { action: 'snapshot', addr: 0, size: 0, stream: 0, time_us: 1, frames: [] };
  writeFileSync(at('no-history.json'), JSON.stringify({ segments: [segment], device_traces: [[]] }));
  writeFileSync(at('marker-only.json'), JSON.stringify({ segments: [segment], device_traces: [[marker]] }));
  writeFileSync(at('oom_rank0.json'), JSON.stringify({ segments: [segment], device_traces: [[]] }));
  writeFileSync(at('few-steps.pickle'), generateSnapshotBytes({ events: 1500, seed: 3 }).bytes);
  // torch_npu recorded with enabled="state": its traces hold only the workspace markers.
  writeFileSync(at('npu-state.pickle'), npuSnapshotBytes({ traced: false }).bytes);
  for (const step of [1, 2])
    for (const rank of [0, 1]) {
      mkdirSync(at(`npu-run/step${step}`), { recursive: true });
      const file = at(`npu-run/step${step}/torch_memory_rank${rank}_pid${100 + rank}.pickle`);
      writeFileSync(file, npuSnapshotBytes({ traced: false, device: rank }).bytes);
    }
  writeGeneratedRun(at('two-windows'), { ...run, windows: 2 });
  // The baselines later tests compare with, each checked to pass against its own source.
  expect(memlens(['a.pickle', '--save-baseline', 'a-base.json']).code).toBe(0);
  expect(memlens(['clean', '--save-baseline', 'run-base.json', '--no-oom', '--no-leak']).code).toBe(0);
}, 60_000);

describe('memlens check: budgets', () => {
  it('a file within its budgets passes (exit 0)', () => {
    const { code, result } = json(['a.pickle', '--max-peak-allocated', '80GiB', '--no-oom', '--no-leak']);
    expect(code).toBe(0);
    expect(result.passed).toBe(true);
    expect(result.rules.map((r) => r.rule)).toEqual(['max-peak-allocated', 'no-oom', 'no-leak']);
  });

  it('a peak over budget fails (exit 1) with the figure, the budget and the largest sites at the peak', () => {
    const r = memlens(['b.pickle', '--max-peak-allocated', '5GiB']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL max-peak-allocated: peak allocated 5\.\d\d GiB in requested bytes: over the budget of 5\.00 GiB/,
    );
    const peak = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'peak', 'b.pickle', '--json'], {
      cwd: work,
      encoding: 'utf8',
    });
    const top = JSON.parse(peak.stdout).files[0].devices[0].groups[0];
    expect(r.stdout).toContain(
      `from ${top.frames[0].name} (${top.frames[0].filename}:${top.frames[0].line})`,
    );
    expect(r.stdout).toContain('see: memlens peak b.pickle');
  });

  it("the allocated peak is no less than the dump's allocated blocks, and says which it counts", () => {
    const summary = (file: string) =>
      JSON.parse(
        spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'summary', file, '--json'], {
          cwd: work,
          encoding: 'utf8',
        }).stdout,
      ).files[0].devices[0] as { allocated_bytes: number; trace_peak_allocated_bytes: number };
    // An OOM dump is taken at its peak: its blocks, rounded up, hold more than the requests did.
    const dump = summary('oom.pickle');
    expect(dump.allocated_bytes).toBeGreaterThan(dump.trace_peak_allocated_bytes);
    const between = Math.floor((dump.allocated_bytes + dump.trace_peak_allocated_bytes) / 2);
    const { code, result } = json(['oom.pickle', '--max-peak-allocated', String(between)]);
    expect(code).toBe(1);
    const x = rule(result, 'max-peak-allocated');
    expect(x).toMatchObject({ passed: false, value: dump.allocated_bytes, counts: 'dump_blocks' });
    expect(x.message).toBe(
      `peak allocated ${formatBytes(dump.allocated_bytes)} in blocks allocated at the dump, above the trace's peak in requested bytes: over the budget of ${formatBytes(between)}`,
    );
    const md = memlens(['oom.pickle', '--max-peak-allocated', String(between), '--format', 'markdown']);
    expect(md.stdout).toContain(
      `| max-peak-allocated | ${formatBytes(dump.allocated_bytes)} (blocks at the dump) | ${formatBytes(between)} |`,
    );
    // Where the trace's peak is higher it is the figure, in requested bytes as \`memlens peak\` says.
    const traced = summary('a.pickle');
    expect(traced.trace_peak_allocated_bytes).toBeGreaterThan(traced.allocated_bytes);
    const ok = rule(json(['a.pickle', '--max-peak-allocated', '80GiB']).result, 'max-peak-allocated');
    expect(ok).toMatchObject({ value: traced.trace_peak_allocated_bytes, counts: 'trace_requested' });
    expect(ok.message).toMatch(
      /^peak allocated [\d.]+ GiB in requested bytes: within the budget of 80\.0 GiB$/,
    );
    expect(
      rule(json(['a.pickle', '--max-peak-reserved', '80GiB']).result, 'max-peak-reserved').counts,
    ).toBeNull();
  });

  it('a leak and its growth per step fail, naming the leaking site', () => {
    const { code, result } = json(['leak.pickle', '--no-leak', '--max-growth-per-step', '1MiB']);
    expect(code).toBe(1);
    for (const name of ['no-leak', 'max-growth-per-step']) {
      const x = rule(result, name);
      expect(x.passed).toBe(false);
      expect(innermost(x)).toMatchObject({ filename: expect.stringMatching(/train\.py$/), line: 218 });
    }
    expect(rule(result, 'max-growth-per-step').value).toBe(16 * MiB);
  });

  it('an OOM fails --no-oom, with what held memory when it failed', () => {
    const { code, result } = json(['oom.pickle', '--no-oom']);
    expect(code).toBe(1);
    const x = rule(result, 'no-oom');
    expect(x.value).toBe(1);
    expect(x.sites.length).toBeGreaterThan(0);
    expect(x.command).toBe('memlens oom oom.pickle');
  });

  it('an OOM dump with no oom entry (named so by its producer) counts as an OOM', () => {
    copyFileSync(at('a.pickle'), at('oom_rank0.pickle'));
    const { code, result } = json(['oom_rank0.pickle', '--no-oom']);
    expect(code).toBe(1);
    expect(rule(result, 'no-oom')).toMatchObject({ value: 1, message: '1 OOM (rank 0): none allowed' });
    expect(rule(result, 'no-oom').sites.length).toBeGreaterThan(0);
  });

  it('fragmentation: bytes or a share of the reserved peak', () => {
    const loose = json(['a.pickle', '--max-fragmentation', '90%']).result.rules[0]!;
    const tight = json(['a.pickle', '--max-fragmentation', '1%']).result.rules[0]!;
    expect(loose.passed).toBe(true);
    expect(tight.passed).toBe(false);
    expect(tight.value).toBe(loose.value);
    expect(json(['a.pickle', '--max-fragmentation', String(tight.value)]).code).toBe(0);
  });

  it('fragmentation names the segments with the most free bytes and the site whose blocks pin them', () => {
    const { code, result } = json(['frag.pickle', '--max-fragmentation', '1GiB']);
    expect(code).toBe(1);
    const x = rule(result, 'max-fragmentation');
    // The planted comb: its segment keeps 2 of its 5 teeth free between live ones.
    expect(x.segments[0]).toMatchObject({ size: 5 * tooth, used_bytes: 3 * tooth, free_bytes: 2 * tooth });
    expect(x.segments[0]!.pool).toBe('large pool, stream 0');
    expect(x.sites[0]).toMatchObject({ bytes: 2 * tooth, segments: 1 });
    expect(innermost(x)).toMatchObject({ name: 'allocate_kv_cache', line: 131 });
    expect(x.command).toBe('memlens frag frag.pickle');
    const text = memlens(['frag.pickle', '--max-fragmentation', '1GiB']).stdout;
    expect(text).toContain(`${formatBytes(2 * tooth)} free of ${formatBytes(5 * tooth)} in segment 0x`);
    expect(text).toMatch(
      /free in 1 segment kept reserved by blocks from allocate_kv_cache \(.*train\.py:131\)/,
    );
    // Every CI format carries them: Markdown, JUnit's failure text, the annotation.
    const args = ['frag.pickle', '--max-fragmentation', '1GiB'];
    for (const out of [
      memlens([...args, '--format', 'markdown']).stdout,
      memlens([...args, '--format', 'junit']).stdout,
      memlens(args, { GITHUB_ACTIONS: 'true' })
        .stdout.split('\n')
        .find((l) => l.startsWith('::error ')),
    ]) {
      expect(out).toContain(`free of ${formatBytes(5 * tooth)} in segment 0x`);
      expect(out).toContain('kept reserved by blocks from allocate_kv_cache');
    }
  });

  it("a run's fragmentation is explained from the file where it is largest", () => {
    const { code, result } = json(['frag-run', '--max-fragmentation', '1GiB']);
    expect(code).toBe(1);
    const x = rule(result, 'max-fragmentation');
    expect(x.place?.rank).toBe(1);
    expect(x.place?.file).toMatch(/oom/);
    expect(innermost(x)?.name).toBe('allocate_kv_cache');
    expect(x.segments[0]!.free_bytes).toBe(x.sites[0]!.bytes);
  });

  it('bad budgets are a one-line error and exit 2', () => {
    for (const args of [
      ['a.pickle', '--max-peak-allocated', '12Q'],
      ['a.pickle', '--tolerance', 'five'],
      ['a.pickle', '--format', 'yaml'],
      ['missing.pickle', '--no-oom'],
    ]) {
      const r = memlens(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(/^memlens: /);
      expect(r.stdout).toBe('');
    }
  });
});

describe('memlens check: against a baseline', () => {
  it('a file against itself, as a snapshot and as a saved baseline, passes', () => {
    expect(memlens(['a.pickle', '--baseline', 'a.pickle']).code).toBe(0);
    const saved = JSON.parse(readFileSync(at('a-base.json'), 'utf8'));
    expect(saved.memlens_check_baseline).toBe(3);
    expect(readFileSync(at('a-base.json')).length).toBeLessThan(64 * 1024);
    expect(memlens(['a.pickle', '--baseline', 'a-base.json']).code).toBe(0);
  });

  it('a planted +256 MiB buffer fails the baseline, naming that site and exactly its bytes', () => {
    const { code, result } = json(['b.pickle', '--baseline', 'a-base.json', '--tolerance', '1%']);
    expect(code).toBe(1);
    const x = rule(result, 'baseline-peak-allocated');
    expect(x.passed).toBe(false);
    expect(x.sites[0]).toEqual({
      bytes: planted.bytes,
      frames: [expect.objectContaining(planted.site), ...x.sites[0]!.frames.slice(1)],
    });
    // Within a tolerance as large as the buffer, the same file passes.
    expect(memlens(['b.pickle', '--baseline', 'a-base.json', '--tolerance', '256MiB']).code).toBe(0);
  });

  it('a clean run against its own saved baseline passes, step by step too', () => {
    const { code, result } = json(['clean', '--baseline', 'run-base.json']);
    expect(code).toBe(0);
    for (const name of ['baseline-step-peak-allocated', 'baseline-step-peak-reserved'])
      expect(rule(result, name)).toMatchObject({ passed: true, not_in_baseline: [] });
    expect(memlens(['clean', '--baseline', 'clean']).code).toBe(0);
    // A cell per rank and step window, its sites' frames kept once: small enough to commit.
    const saved = JSON.parse(readFileSync(at('run-base.json'), 'utf8'));
    expect(saved.cells).toHaveLength(2 * 4);
    expect(readFileSync(at('run-base.json')).length).toBeLessThan(64 * 1024);
  });

  it("a regression at step 3 that stays below the rank's peak is caught in its cell, with rank, step and site", () => {
    const { code, result } = json(['quiet-extra', '--baseline', 'quiet']);
    expect(code).toBe(1);
    // The rank's peak (steps 1-2) did not move: only the cell-by-cell comparison sees it.
    expect(rule(result, 'baseline-peak-allocated').passed).toBe(true);
    const x = rule(result, 'baseline-step-peak-allocated');
    expect(x.passed).toBe(false);
    expect(x.place).toMatchObject({ rank: 1, step: 3 });
    expect(x.sites[0]!.bytes).toBe(128 * MiB);
    expect(innermost(x)?.name).toBe('allocate_rank_buffer');
    expect(x.message).toMatch(/\(rank 1, step 3\): above the baseline's/);
  });

  it('a site growing every step on one rank is caught at the first step it grows, naming it', () => {
    const { code, result } = json(['growth64', '--baseline', 'run-base.json']);
    expect(code).toBe(1);
    const x = rule(result, 'baseline-step-peak-allocated');
    expect(x.place).toMatchObject({ rank: 1, step: 1 });
    expect(innermost(x)).toMatchObject({ filename: expect.stringMatching(/train\.py$/), line: 218 });
    expect(x.message).toContain('4 of 8 cells above their baseline');
  });

  it('names the cells the baseline lacks', () => {
    const { code, result } = json(['clean', '--baseline', 'short']);
    expect(code).toBe(0);
    expect(rule(result, 'baseline-step-peak-allocated').not_in_baseline).toEqual([
      'rank 0, step 4',
      'rank 1, step 4',
    ]);
    expect(rule(result, 'baseline-step-peak-allocated').message).toContain(
      'not in the baseline: rank 0, step 4, rank 1, step 4',
    );
  });

  it("a rank the baseline lacks is held to the baseline run's own peak, not skipped", () => {
    const { code, result } = json(['wider', '--baseline', 'run-base.json']);
    expect(code).toBe(1);
    const x = rule(result, 'baseline-peak-allocated');
    expect(x.passed).toBe(false);
    expect(x.place?.rank).toBe(3);
    const saved = JSON.parse(readFileSync(at('run-base.json'), 'utf8'));
    expect(x.baseline).toBe(saved.figures.peak_allocated);
    expect(x.value).toBeGreaterThan(saved.figures.peak_allocated + 4000 * MiB);
  });

  it('names the baseline cells this run lacks (a rank or step that stopped dumping)', () => {
    const { result } = json(['short', '--baseline', 'run-base.json']);
    const x = rule(result, 'baseline-step-peak-allocated');
    expect(x.not_in_run).toEqual(['rank 0, step 4', 'rank 1, step 4']);
    expect(x.message).toContain('in the baseline but not in this run: rank 0, step 4, rank 1, step 4');
    expect(rule(result, 'baseline-step-peak-allocated').not_in_baseline).toEqual([]);
  });

  it('a run with a buffer kept from step 3 fails, naming the site, its rank, and the step it appeared', () => {
    const { code, result } = json(['extra', '--baseline', 'run-base.json', '--tolerance', '1%']);
    expect(code).toBe(1);
    const x = rule(result, 'baseline-peak-allocated');
    expect(innermost(x)?.name).toBe('allocate_rank_buffer');
    expect(x.sites[0]!.bytes).toBe(512 * MiB);
    expect(x.place?.rank).toBe(1);
    expect(x.appears).toMatchObject({ rank: 1, step: 3 });
    // Rank 1 grew, yet stays below rank 0's peak: only a rank-by-rank comparison sees it.
    const saved = JSON.parse(readFileSync(at('run-base.json'), 'utf8'));
    expect(x.value).toBeLessThan(saved.figures.peak_allocated);
    expect(x.baseline).toBe(saved.ranks.find((r: { rank: number }) => r.rank === 1).peak_allocated);
  });

  it('a run with a site growing every step fails the growth and leak rules at that rank', () => {
    const { code, result } = json(['growth', '--baseline', 'run-base.json', '--max-growth-per-step', '1MiB']);
    expect(code).toBe(1);
    for (const name of ['max-growth-per-step', 'baseline-growth-per-step', 'baseline-leaks']) {
      const x = rule(result, name);
      expect(x.passed, name).toBe(false);
      expect(x.place?.rank, name).toBe(1);
      expect(innermost(x)?.line, name).toBe(218);
    }
    expect(rule(result, 'max-growth-per-step').value).toBe(16 * MiB);
  });

  it("a run's OOM dump fails --no-oom and the baseline's OOM count", () => {
    const { code, result } = json(['oom-run', '--baseline', 'run-base.json', '--no-oom']);
    expect(code).toBe(1);
    expect(rule(result, 'no-oom').place?.rank).toBe(0);
    expect(rule(result, 'baseline-ooms').passed).toBe(false);
  });

  it('bad baselines are a one-line error and exit 2', () => {
    writeFileSync(at('old.json'), JSON.stringify({ memlens_check_baseline: 99, figures: {} }));
    const current = JSON.parse(readFileSync(at('run-base.json'), 'utf8'));
    const { cells, cell_sites, ...v1 } = current;
    writeFileSync(at('v1.json'), JSON.stringify({ ...v1, memlens_check_baseline: 1 }));
    // Version 2 figures counted a peak in requested bytes only: no longer the same figure.
    writeFileSync(at('v2.json'), JSON.stringify({ ...current, memlens_check_baseline: 2 }));
    writeFileSync(
      at('badcell.json'),
      JSON.stringify({
        ...current,
        cells: [{ ...cells[0], sites: [{ site: cell_sites.length, bytes: 1, count: 1 }] }],
      }),
    );
    writeFileSync(at('broken.json'), '{"memlens_check_baseline": 1, "figures": ');
    writeFileSync(
      at('nosites.json'),
      JSON.stringify({ ...JSON.parse(readFileSync(at('a-base.json'), 'utf8')), peak: {} }),
    );
    for (const [file, why] of [
      ['old.json', /baseline version 99/],
      [
        'v1.json',
        /baseline version 1, this memlens reads version 3 \(write it again with check --save-baseline\)/,
      ],
      ['v2.json', /baseline version 2, this memlens reads version 3/],
      ['badcell.json', /baseline cells is malformed/],
      ['broken.json', /not valid JSON/],
      ['nosites.json', /peak\.sites/],
      ['nothing.json', /nothing\.json/],
    ] as const) {
      const r = memlens(['a.pickle', '--baseline', file]);
      expect(r.code, file).toBe(2);
      expect(r.stderr.trim().split('\n'), file).toHaveLength(1);
      expect(r.stderr, file).toMatch(why);
    }
  });
});

describe('memlens check: what the record cannot show is not judged', () => {
  const rules = ['--no-oom', '--no-leak', '--max-growth-per-step', '1MiB', '--max-peak-allocated', '1GiB'];
  const unjudged = ['no-oom', 'no-leak', 'max-growth-per-step', 'max-peak-allocated'];

  it('a file without allocation history judges no OOM, leak, growth or peak within budget, and fails nothing (exit 0)', () => {
    for (const file of ['no-history.json', 'marker-only.json']) {
      const { code, result } = json([file, ...rules]);
      expect(code, file).toBe(0);
      expect(result.passed, file).toBe(true);
      // Its peak is the dump's figure, which the run may have passed: under budget is no verdict.
      for (const name of unjudged) {
        expect(rule(result, name).passed, `${file} ${name}`).toBeNull();
        expect(rule(result, name).message, `${file} ${name}`).toMatch(
          /not judged: the file has no trace history \(allocation history not recorded, or the ring buffer kept no entry\)$/,
        );
      }
      const text = memlens([file, ...rules]);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(`${file}: not judged: the record cannot show what its 4 rules ask`);
      expect(text.stdout).toMatch(/^ {2}skip no-oom: OOMs not judged: the file has no trace history/m);
      expect(text.stdout).not.toMatch(/0 OOMs|0 leaking sites|see: /);
    }
  });

  it('torch_npu\'s workspace markers are no history: a file or run recorded with enabled="state" is not judged', () => {
    const file = json(['npu-state.pickle', ...rules]).result;
    for (const name of unjudged) expect(rule(file, name).passed, `file ${name}`).toBeNull();
    expect(rule(file, 'no-oom').message).toMatch(/not judged: the file has no trace history/);
    // Twice: the second reads every cell from the result cache, which must say the same.
    for (const pass of ['decoded', 'cached']) {
      const run = json(['npu-run', ...rules]).result;
      expect(rule(run, 'no-oom').passed, pass).toBeNull();
      expect(rule(run, 'no-oom').message, pass).toMatch(
        /^OOMs not judged: 4 of 4 snapshots have no trace history \(allocation history not recorded, or the ring buffer kept no entry\): npu-run\/step1\/torch_memory_rank0_pid100\.pickle and 3 more$/,
      );
      expect(rule(run, 'max-peak-allocated').passed, pass).toBeNull();
    }
  });

  it('every CI format shows it: JUnit skipped, Markdown, a warning annotation', () => {
    const args = ['no-history.json', '--no-oom'];
    const junit = memlens([...args, '--format', 'junit']);
    expect(junit.code).toBe(0);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(junit.stdout);
    expect(doc.testsuites).toMatchObject({ tests: '1', failures: '0', skipped: '1' });
    expect(doc.testsuites.testsuite).toMatchObject({ tests: '1', failures: '0', skipped: '1' });
    expect(doc.testsuites.testsuite.testcase.skipped.message).toMatch(
      /^OOMs not judged: the file has no trace/,
    );
    const md = memlens([...args, '--format', 'markdown']).stdout;
    expect(md).toContain('### memlens check: ⚠️ not judged: the record cannot show what its rule asks');
    expect(md).toContain('| no-oom | — | 0 | — |  | not judged |');
    expect(md).toMatch(/\*\*no-oom\*\*: OOMs not judged: the file has no trace history/);
    const actions = memlens(args, { GITHUB_ACTIONS: 'true' });
    expect(actions.code).toBe(0);
    expect(actions.stdout).toMatch(
      /^::warning title=memlens check no-oom::no-history\.json: OOMs not judged: the file has no trace/m,
    );
    expect(actions.stdout).not.toContain('::error');
  });

  it('a rule is still broken by what was found: an OOM dump with no history fails --no-oom', () => {
    const { code, result } = json(['oom_rank0.json', '--no-oom']);
    expect(code).toBe(1);
    expect(rule(result, 'no-oom')).toMatchObject({ passed: false, value: 1 });
  });

  it('against a baseline, the same figures are not judged either', () => {
    const { code, result } = json(['no-history.json', '--baseline', 'a-base.json', '--tolerance', '100GiB']);
    expect(code).toBe(0);
    for (const name of [
      'baseline-ooms',
      'baseline-leaks',
      'baseline-growth-per-step',
      'baseline-peak-allocated',
    ])
      expect(rule(result, name).passed, name).toBeNull();
  });

  it('too few iterations in a file, or step windows in a run, leave leaks and growth unjudged', () => {
    const file = json(['few-steps.pickle', ...rules]).result;
    expect(rule(file, 'no-oom').passed).toBe(true);
    expect(rule(file, 'no-leak').message).toMatch(
      /^leaking sites not judged: only 2 iterations in the trace, too few to see anything accumulate$/,
    );
    expect(rule(file, 'max-growth-per-step').passed).toBeNull();
    const run = json(['two-windows', ...rules]).result;
    expect(rule(run, 'no-oom').passed).toBe(true);
    for (const name of ['no-leak', 'max-growth-per-step'])
      expect(rule(run, name).message, name).toMatch(/not judged: no rank has 3 step windows to compare$/);
  });
});

describe('memlens check: budgets from pyproject.toml', () => {
  const dir = at('repo');
  const check = (toml: string, args: string[]) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'pyproject.toml'), toml);
    return spawnSync(
      process.execPath,
      [...NODE_FLAGS, CLI, 'check', join(work, 'b.pickle'), '--json', ...args],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, GITHUB_ACTIONS: '', XDG_CACHE_HOME: at('cache') },
      },
    );
  };

  it('reads [tool.memlens.check]; options override it; --no-config ignores it', () => {
    const toml =
      '[project]\nname = "x"\n\n[tool.memlens.check]\nmax-peak-allocated = "5GiB"\nno-oom = true\n';
    const fromFile = check(toml, []);
    expect(fromFile.status).toBe(1);
    expect((JSON.parse(fromFile.stdout) as CheckResult).rules.map((r) => r.rule)).toEqual([
      'max-peak-allocated',
      'no-oom',
    ]);
    expect(check(toml, ['--max-peak-allocated', '8GiB']).status).toBe(0);
    expect((JSON.parse(check(toml, ['--no-config']).stdout) as CheckResult).rules).toEqual([]);
  });

  it('a baseline path in the table is relative to pyproject.toml', () => {
    const r = check(`[tool.memlens.check]\nbaseline = "../a-base.json"\n`, []);
    expect(r.status).toBe(1);
    expect(rule(JSON.parse(r.stdout), 'baseline-peak-allocated').passed).toBe(false);
  });

  it('a bad value or key in the table is a one-line error naming it (exit 2)', () => {
    for (const [toml, why] of [
      ['[tool.memlens.check]\nmax-peak-reserved = "lots"\n', /max-peak-reserved: expected a size/],
      ['[tool.memlens.check]\nno-om = true\n', /unknown key no-om/],
      ['[tool.memlens.check\n', /pyproject\.toml/],
    ] as const) {
      const r = check(toml, []);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(why);
    }
  });
});

describe('memlens check: where CI reads it', () => {
  const args = ['b.pickle', '--baseline', 'a.pickle', '--no-oom', '--max-peak-allocated', '80GiB'];

  it("text: the command under a failure is wrapped as diagnose's are, and runs as printed", () => {
    const dir = at(`it's a "deep" folder ${'x'.repeat(60)}`);
    mkdirSync(dir);
    const file = join(dir, 'b copy.pickle');
    copyFileSync(at('b.pickle'), file);
    const r = memlens([file, '--max-peak-allocated', '1GiB', '--no-oom'], { MEMLENS_WIDTH: '60' });
    expect(r.code).toBe(1);
    const commands = printedCommands(r.stdout, 'see: ');
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatch(/^memlens peak \\\n'/);
    const { echo, real } = memlensOnPath(work);
    expect(inShell(echo, commands[0]!).stdout.split('\0')).toEqual(['peak', file, '']);
    const run = inShell(real, commands[0]!);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('b copy.pickle');
  });

  it('JUnit XML: testsuites > testsuite > testcase per rule, a failure per broken rule', () => {
    const r = memlens([...args, '--format', 'junit']);
    expect(r.code).toBe(1);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(r.stdout);
    const suites = doc.testsuites;
    const suite = suites.testsuite;
    const cases = suite.testcase as {
      name: string;
      failure?: { message: string; type: string; '#text': string };
    }[];
    expect(Number(suites.tests)).toBe(cases.length);
    expect(Number(suite.tests)).toBe(cases.length);
    expect(cases.map((c) => c.name)).toContain('baseline-peak-allocated');
    const failed = cases.filter((c) => c.failure !== undefined);
    expect(Number(suites.failures)).toBe(failed.length);
    expect(Number(suite.failures)).toBe(failed.length);
    expect(failed.map((c) => c.name)).toEqual(['baseline-peak-allocated', 'baseline-peak-reserved']);
    expect(failed[0]!.failure!['#text']).toContain(planted.site.name);
  });

  it('Markdown: the verdict, a row per rule, the sites of failures and the command to see more', () => {
    const r = memlens([...args, '--format', 'markdown']);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^### memlens check: ❌ FAILED: 2 of 8 rules broken$/);
    const rows = lines.filter((l) => l.startsWith('| '));
    expect(rows).toHaveLength(1 + 8);
    for (const row of rows) expect(row.split(/(?<!\\)\|/).length).toBe(rows[0]!.split(/(?<!\\)\|/).length);
    expect(r.stdout).toContain(`- 256 MiB from ${planted.site.name}`);
    expect(r.stdout).toContain('See more: `memlens peak b.pickle`');
    expect(lines.length).toBeLessThan(40);
  });

  it('GitHub Actions: an ::error annotation per broken rule, only there', () => {
    const there = memlens(args, { GITHUB_ACTIONS: 'true' });
    const errors = there.stdout.split('\n').filter((l) => l.startsWith('::error '));
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(
      /^::error title=memlens check baseline-peak-allocated::b\.pickle: peak allocated .* allocate_rank_buffer/,
    );
    expect(memlens(args).stdout).not.toContain('::error');
    // In the checked-out repository the annotation sits on the site's line, in the pull request's diff.
    const repo = planted.site.filename.slice(0, planted.site.filename.lastIndexOf('/'));
    const placed = memlens(args, { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: repo }).stdout;
    const file = planted.site.filename.slice(repo.length + 1);
    expect(placed).toContain(
      `::error title=memlens check baseline-peak-allocated,file=${file},line=${planted.site.line}::`,
    );
    // JSON stays one document: the annotations go to stderr.
    const j = memlens([...args, '--json'], { GITHUB_ACTIONS: 'true' });
    expect(JSON.parse(j.stdout).passed).toBe(false);
    expect(j.stderr).toContain('::error ');
  });
});
