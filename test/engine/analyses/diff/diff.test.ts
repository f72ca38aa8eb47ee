import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { diffSides, diffSnapshots } from '../../../../src/engine/analyses/diff/diff.js';
import { type DiffSide, diffSide } from '../../../../src/engine/analyses/diff/diff-side.js';
import { fragmentationOf } from '../../../../src/engine/analyses/fragmentation/fragmentation.js';
import { oomReports } from '../../../../src/engine/analyses/oom/oom.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { Snapshot } from '../../../../src/engine/model/snapshot.js';
import type { Frame } from '../../../../src/engine/model/stack-table.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const GiB = 2 ** 30;

const diff = (a: Snapshot, b: Snapshot, top = 10) => diffSnapshots(a, b, a.devices, b.devices, { top });

/** Two ranks of one job: the same run, one with an extra 2 GiB buffer from a known line. */
function ranks() {
  const options = { events: 4000, seed: 71, streams: 1 };
  const a = generateSnapshotBytes(options);
  const b = generateSnapshotBytes({ ...options, extraBuffer: 2 * GiB });
  return { a: a.bytes, b: b.bytes, planted: b.expected.extra_buffer! };
}

describe('diff of two planted ranks', () => {
  const { a, b, planted } = ranks();
  const sa = loadSnapshotBytes(a);
  const sb = loadSnapshotBytes(b);

  it('names the planted site and its bytes first, at dump and at the peak', () => {
    const [d] = diff(sa, sb).devices;
    for (const m of [d!.at_dump, d!.at_peak]) {
      const first = m.sites[0]!;
      expect(first.frames[0]).toEqual(planted.site);
      expect(first.delta_bytes).toBe(planted.bytes);
      expect([first.a_count, first.b_count]).toEqual([0, 1]);
    }
    // The rest of the run is the same: at dump nothing else differs.
    expect(d!.at_dump.sites).toHaveLength(1);
    expect(d!.at_dump.delta_bytes).toBe(planted.bytes);
    const reserved = d!.totals.find((t) => t.metric === 'reserved_bytes')!;
    expect(reserved.delta).toBe(planted.bytes);
    expect(d!.explanation[1]).toMatch(/2\.00 GiB more in B from allocate_rank_buffer/);
  });

  it('the other way round, the difference is negative', () => {
    const [d] = diff(sb, sa).devices;
    expect(d!.at_dump.sites[0]!.delta_bytes).toBe(-planted.bytes);
    expect(d!.at_dump.sites[0]!.frames[0]).toEqual(planted.site);
  });

  it('a file against itself: every figure and site equal', () => {
    const [d] = diff(sa, loadSnapshotBytes(a)).devices;
    expect(d!.totals.every((t) => t.delta === 0)).toBe(true);
    for (const m of [d!.at_dump, d!.at_peak]) {
      expect(m.sites).toEqual([]);
      expect(m.delta_bytes).toBe(0);
      expect(m.a_after_entry).toBe(m.b_after_entry);
    }
  });

  it('memlens diff prints the site and the JSON (built CLI)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memlens-diff-'));
    const fa = join(dir, 'rank0.pickle');
    const fb = join(dir, 'rank3.pickle');
    writeFileSync(fa, a);
    writeFileSync(fb, b);
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'diff', ...args], {
        encoding: 'utf8',
        timeout: 60_000,
      });
    const text = run(fa, fb);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/B holds 2\.00 GiB more in live allocations/);
    expect(text.stdout).toMatch(/allocate_rank_buffer \(.*train\.py:143\)/);
    const json = JSON.parse(run('--json', fa, fb).stdout);
    expect(json.files).toEqual([{ file: fa }, { file: fb }]);
    expect(json.devices[0].at_dump.sites[0].delta_bytes).toBe(planted.bytes);
    expect(text.stdout).toMatch(/sites matched: \d+ by the same frames, 0 only in A, 1 only in B/);
    const bad = run(fa, join(dir, 'missing.pickle'));
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^memlens: .*missing\.pickle: /);
    // A corrupt file fails in its decoding thread: still one line naming it, exit 2, no stack trace.
    const corrupt = join(dir, 'corrupt.pickle');
    writeFileSync(corrupt, a.subarray(0, a.length >> 1));
    const broken = run('--json', corrupt, fb);
    expect(broken.status).toBe(2);
    expect(broken.stderr.trim().split('\n')).toHaveLength(1);
    expect(broken.stderr).toMatch(/^memlens: .*corrupt\.pickle: /);
    expect(JSON.parse(broken.stdout).files[0].error).toBeTruthy();
  });
});

/** B's half with every frame rewritten: what another checkout or library version records. */
function rewritten(side: DiffSide, change: (f: Frame) => Frame): DiffSide {
  const moment = (m: DiffSide['devices'][0]['at_dump']) => ({
    ...m,
    sites: m.sites.map((g) => ({ ...g, frames: g.frames.map(change) })),
  });
  return {
    devices: side.devices.map((d) => ({ ...d, at_dump: moment(d.at_dump), at_peak: moment(d.at_peak) })),
  };
}

describe('diff when the two ranks record different stacks for the same code', () => {
  const { a, b, planted } = ranks();
  const sa = loadSnapshotBytes(a);
  const sb = loadSnapshotBytes(b);

  /** Sites at dump in A whose frames a rewrite leaves as they are. */
  const untouched = (change: (f: Frame) => Frame) =>
    diffSide(sa, sa.devices, false).devices[0]!.at_dump.sites.filter((g) =>
      g.frames.every((f) => JSON.stringify(change(f)) === JSON.stringify(f)),
    ).length;

  /** Only the planted buffer differs, and it is paired with nothing; every other site is paired. */
  const expectOnlyPlanted = (full: boolean, change: (f: Frame) => Frame) => {
    const [d] = diffSides(
      diffSide(sa, sa.devices, full),
      rewritten(diffSide(sb, sb.devices, full), change),
    ).devices;
    for (const m of [d!.at_dump, d!.at_peak]) {
      expect(m.sites[0]!.delta_bytes).toBe(planted.bytes);
      expect(m.sites[0]!.matched_by).toBe('only_b');
      expect(m.matching.innermost_user_frame).toBeGreaterThan(0);
      expect(m.matching.only_a).toBe(0);
      expect(m.matching.only_b).toBe(1);
    }
    expect(d!.at_dump.sites).toHaveLength(1);
    expect(d!.explanation.join('\n')).toMatch(/matched by their innermost user frame only/);
    return d!;
  };

  it('pairs sites by their innermost user frame when the script ran from another directory', () => {
    const moved = (f: Frame) =>
      f.filename.endsWith('train.py') || f.filename.endsWith('model.py')
        ? { ...f, filename: `/elsewhere/rank3${f.filename}` }
        : f;
    const d = expectOnlyPlanted(false, moved);
    // Only sites without a frame of the moved files still have the same frames.
    expect(d.at_dump.matching.same_frames).toBe(untouched(moved));
  });

  it('pairs whole stacks that differ only in a library frame (--full-stacks)', () => {
    const bumped = (f: Frame) => (f.filename.includes('/torch/') ? { ...f, line: f.line + 1 } : f);
    const d = expectOnlyPlanted(true, bumped);
    // Stacks without a torch frame still match exactly.
    expect(d.at_dump.matching.same_frames + d.at_dump.matching.innermost_user_frame).toBeGreaterThan(1);
    // And with the unchanged files, whole stacks match exactly: the fallback is not needed.
    const [same] = diffSnapshots(sa, sb, sa.devices, sb.devices, { fullStacks: true }).devices;
    expect(same!.at_dump.matching.innermost_user_frame).toBe(0);
    expect(same!.at_dump.sites[0]!.delta_bytes).toBe(planted.bytes);
  });

  it('does not pair different code: a site whose innermost user frame differs stays unmatched', () => {
    const renamed = (f: Frame) => (f.filename.endsWith('.py') ? { ...f, line: f.line + 100_000 } : f);
    const [d] = diffSides(
      diffSide(sa, sa.devices, false),
      rewritten(diffSide(sb, sb.devices, false), renamed),
    ).devices;
    expect(d!.at_dump.matching.innermost_user_frame).toBe(0);
    expect(d!.at_dump.matching.same_frames).toBe(untouched(renamed));
    expect(d!.at_dump.matching.only_a).toBeGreaterThan(0);
  });
});

describe.skipIf(files.length === 0)('corpus files through frag, oom and diff', () => {
  for (const file of files) {
    it(file, () => {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
      for (const d of s.devices) {
        expect(fragmentationOf(s, d, { at: Math.floor(d.trace.length / 2) }).at).not.toBeNull();
        for (const r of oomReports(s, d)) expect(r.verdict).toBeTruthy();
      }
      const [d] = diff(s, s, 1_000_000).devices;
      expect(d!.at_dump.sites).toEqual([]);
      // Live bytes at dump and at the peak are the model's allocated curve at those moments.
      const dev = s.devices[0]!;
      expect(d!.at_dump.a_bytes).toBe(dev.totals.end.allocated);
      expect(d!.at_peak.a_bytes).toBe(dev.totals.peak.allocated);
    });
  }

  it('two ranks of one job: the differences add up to the difference of the totals', () => {
    const pair = files.filter((f) => f.startsWith('THUDM_slime'));
    if (pair.length < 2) return;
    const [a, b] = pair.map((f) => loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, f)))));
    const [d] = diff(a!, b!, 1_000_000).devices;
    const m = d!.at_dump;
    expect(m.sites.reduce((n, s) => n + s.delta_bytes, 0)).toBe(m.delta_bytes);
    expect(m.delta_bytes).toBe(b!.devices[0]!.totals.end.allocated - a!.devices[0]!.totals.end.allocated);
    expect(Math.abs(m.sites[0]!.delta_bytes)).toBeGreaterThanOrEqual(Math.abs(m.sites.at(-1)!.delta_bytes));
  });
});
