import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { OOM_CAUSES, type OomCause } from '../../../../scripts/synth/oom-plant.js';
import { oomReports } from '../../../../src/engine/analyses/oom/oom.js';
import { OUTSIDE_NOTABLE } from '../../../../src/engine/analyses/oom/verdict.js';
import { peakOf } from '../../../../src/engine/analyses/peak/peak.js';
import { userFirstStack } from '../../../../src/engine/derived/frames/user-frames.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { simulate } from '../../../../src/engine/simulate/simulate.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const GiB = 2 ** 30;
const cli = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const run = (...args: string[]) =>
  spawnSync(process.execPath, [...NODE_FLAGS, cli, ...args], { encoding: 'utf8', timeout: 60_000 });

function generated(cause: OomCause) {
  const { bytes, expected } = generateSnapshotBytes({ events: 3000, seed: 61, oomCause: cause });
  const s = loadSnapshotBytes(bytes);
  const dir = mkdtempSync(join(tmpdir(), 'memlens-oom-report-'));
  const file = join(dir, `${cause}.pickle`);
  writeFileSync(file, bytes);
  return { s, d: s.devices[0]!, facts: expected.oom_causes![0]!, file };
}

const files = Object.fromEntries(OOM_CAUSES.map((c) => [c, generated(c)])) as Record<
  OomCause,
  ReturnType<typeof generated>
>;

describe('an OOM with PyTorch holding a small part of the device', () => {
  const { s, d, facts, file } = files.outside;

  it('is not called exhaustion without a capacity: both readings, and the figure that decides', () => {
    const r = oomReports(s, d)[0]!;
    expect(r.verdict).toBe('undetermined');
    expect(r.reserved_bytes + r.device_free_bytes).toBeLessThan(6 * GiB);
    expect(r.readings.map((x) => x.verdict)).toEqual(['outside PyTorch', 'exhaustion']);
    // The deciding GPU size: the request fits beside what PyTorch reserved, and the rest is notable.
    expect(r.deciding_capacity_bytes).toBe(
      Math.max(
        r.reserved_bytes + r.requested_bytes,
        r.reserved_bytes + r.device_free_bytes + OUTSIDE_NOTABLE,
      ),
    );
    expect(r.headline).toMatch(/held outside PyTorch unless the GPU really has only about/);
    expect(r.headline).toMatch(/--capacity/);
    expect(r.explanation[0]).not.toMatch(/live tensors needed more/);
  });

  it('with the GPU given in units, it is memory outside PyTorch', () => {
    const text = run('oom', '--capacity', '80GiB', file);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/oom at trace entry [\d,]+: outside PyTorch\n/);
    const j = JSON.parse(run('oom', '--json', '--capacity', `${facts.capacity_bytes}`, file).stdout);
    expect(j.files[0].devices[0].ooms[0].verdict).toBe('outside PyTorch');
    expect(j.files[0].devices[0].ooms[0].outside_bytes).toBe(facts.outside_bytes);
  });

  it('a GPU really that small makes it the other reading', () => {
    const r0 = oomReports(s, d)[0]!;
    const r = oomReports(s, d, r0.reserved_bytes + r0.device_free_bytes)[0]!;
    expect(r.verdict).toBe(r0.readings[1]!.verdict);
  });

  it('a capacity below what the file shows is refused in one line naming the file', () => {
    const r = run('oom', '--capacity', '1GiB', file);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/--capacity 1\.00 GiB is below/);
  });
});

describe('each planted cause, with and without the capacity', () => {
  for (const cause of OOM_CAUSES) {
    it(cause, () => {
      const { s, d, facts } = files[cause];
      expect(oomReports(s, d, facts.capacity_bytes)[0]!.verdict).toBe(facts.verdict);
      const blind = oomReports(s, d)[0]!.verdict;
      expect(blind).toBe(cause === 'outside' ? 'undetermined' : facts.verdict);
    });
  }
});

describe('the OOM report goes the whole way', () => {
  it("shows the failing request's stack, user frames first", () => {
    const { s, d } = files.fragmentation;
    const r = oomReports(s, d)[0]!;
    const all = s.stacks.frames(d.trace.stack[r.entry]!);
    expect(r.stack).toEqual(userFirstStack(all).frames);
    expect(r.stack_inner).toEqual(userFirstStack(all).inner);
    expect(r.stack[0]!.kind).toBe('user');
    expect(r.stack_frames).toBe(all.length);
    expect(r.stack[0]!.filename.endsWith('.py')).toBe(true);
    expect(all[0]!.filename.endsWith('.py')).toBe(false); // the recorded stack starts in the unwinder
  });

  it('shows what held memory then, as peak --at that entry does, by site and by category', () => {
    const { s, d } = files.exhaustion;
    const r = oomReports(s, d)[0]!;
    const peak = peakOf(s, d, { at: r.entry, top: 5 });
    expect(r.held.after_entry).toBe(r.entry);
    expect(r.held.sites).toEqual(peak.groups);
    expect(r.held.live_bytes).toBe(peak.allocated_bytes);
    expect(r.held.categories.reduce((n, c) => n + c.bytes, 0)).toBe(peak.allocated_bytes);
    expect(r.held.categories[0]!.bytes).toBeGreaterThan(r.held.live_bytes / 2);
  });

  it('derives a max_split_size_mb value that the replay shows avoids the fragmentation OOM', () => {
    const { s, d } = files.fragmentation;
    const r = oomReports(s, d)[0]!;
    const split = r.suggestions.find((x) => x.setting?.startsWith('max_split_size_mb:'));
    expect(split?.setting).toMatch(/^max_split_size_mb:\d+$/);
    const mb = Number(split!.setting!.split(':')[1]);
    // Large enough for PyTorch to accept, no larger than the free blocks it must give back.
    expect(mb).toBeGreaterThan(20);
    expect(mb * 2 ** 20).toBeLessThanOrEqual(r.largest_free_block);
    for (const x of r.suggestions.filter((y) => y.setting !== null)) {
      expect(x.simulate).toBe(`--set ${x.setting}`);
      const w = simulate(s, [d], { set: x.setting! }).devices[0]!.what_if!;
      expect(w.oom).toBe(false);
    }
  });

  it('prints a simulate line per suggestion and entries that commands accept back as printed', () => {
    const { file } = files.fragmentation;
    const out = run('oom', file);
    expect(out.status).toBe(0);
    // A command too long for a line goes on with a trailing backslash, as a shell joins it.
    const joined = out.stdout.replace(/ \\\n +/g, ' ');
    const lines = [...joined.matchAll(/test it with:\n +\$ memlens simulate (\S+) (.+)/g)];
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const [, f, args] of lines) {
      expect(f).toBe(file);
      const sim = run('simulate', f!, ...args!.split(' '), '--json');
      expect(sim.stderr).toBe('');
      expect(sim.status).toBe(0);
      expect(JSON.parse(sim.stdout).files[0].devices[0].what_if.oom).toBe(false);
    }
    const at = /memlens peak \S+ --at ([\d,]+)/.exec(out.stdout.replace(/\n\s+/g, ' '))![1]!;
    expect(at).toMatch(/,/);
    const peak = run('peak', file, '--at', at);
    expect(peak.status).toBe(0);
    expect(peak.stdout).toContain(`after trace entry ${at} of`);
    // Text fits 100 columns, commands too: they wrap whole, between their words.
    for (const line of out.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });
});

describe('a dump-time check with a capacity but no request', () => {
  it('says the largest request that would fit, not "not out of device memory"', () => {
    const { bytes } = generateSnapshotBytes({ events: 2000, seed: 5 });
    const s = loadSnapshotBytes(bytes);
    const d = s.devices[0]!;
    const cap = d.totals.end.reserved + 4 * GiB;
    const r = oomReports(s, d, cap)[0]!;
    expect(r.entry).toBe(-1);
    expect(r.verdict).toBe('would fit');
    expect(r.largest_fitting_request_bytes).toBeGreaterThanOrEqual(4 * GiB);
    expect(r.headline).toMatch(/a request of up to/);
    expect(r.explanation.join(' ')).toMatch(/assumes nothing outside PyTorch/);
    // A request above it is judged, with the same state.
    const big = oomReports(s, d, cap, r.largest_fitting_request_bytes! + 64 * 2 ** 20)[0]!;
    expect(['exhaustion', 'fragmentation']).toContain(big.verdict);
  });
});

describe('the corpus (no oom events) with a capacity', () => {
  const dir = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
  const corpus = (() => {
    try {
      return readdirSync(dir).filter((f) => /\.(pickle|json)(\.gz)?$/.test(f));
    } catch {
      return [];
    }
  })();
  it.skipIf(corpus.length === 0)('every file gives a report per device or no oom, without failing', () => {
    for (const f of corpus.slice(0, 6)) {
      const r = run('oom', '--capacity', '80GiB', '--json', join(dir, f));
      expect([0, 2], r.stderr).toContain(r.status);
      const j = JSON.parse(r.stdout).files[0];
      if (j.error !== undefined) {
        expect(j.error).toMatch(/--capacity 80\.0 GiB is below|not a pickle|truncated|unsupported/i);
        continue;
      }
      for (const dev of j.devices) for (const o of dev.ooms) expect(o.headline.length).toBeGreaterThan(0);
    }
  });
});
