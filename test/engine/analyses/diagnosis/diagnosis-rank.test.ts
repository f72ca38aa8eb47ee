import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../../scripts/synth/index.js';
import { OOM_CAUSES } from '../../../../scripts/synth/oom-plant.js';
import { wrapIndented } from '../../../../src/cli/text/indent.js';
import { diagnose, diagnoseFile } from '../../../../src/engine/analyses/diagnosis/diagnosis.js';
import type { Finding } from '../../../../src/engine/analyses/diagnosis/finding.js';
import { leakFinding } from '../../../../src/engine/analyses/diagnosis/leak-finding.js';
import { leaksOf } from '../../../../src/engine/analyses/leaks/leaks.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';

/**
 * The diagnosis ranks what a user would: an OOM first, then growth that would fill the device
 * within the run, then what problems cost, by bytes at stake; headlines fit two lines at 100
 * columns and never say the opposite of their evidence. On generated snapshots.
 */
const MiB = 2 ** 20;
const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
/** A few real traces (a training loop, an inference run), when the corpus is present. */
const CORPUS_FILES = [
  'Wedsonlin_assignment2__results_medium_512_training_memory_snapshot__87b0864.pickle',
  'Yiyi_LLM-inference__oom_snapshot__61261a2.pickle',
  'ZidongLiu_DeComFL__memory__edd30e0.pickle',
].filter((f) => existsSync(join(CORPUS, f)));
const GiB = 2 ** 30;
const generated = (o: WriteOptions) => loadSnapshotBytes(generateSnapshotBytes(o).bytes);
const index = (fs: Finding[], kind: string) => fs.findIndex((f) => f.kind === kind);
/** The CLI's layout: the headline after an 11-column label, at 100 columns. */
const headlineLines = (f: Finding) => wrapIndented(f.headline, 100, ' '.repeat(11)).length;

describe('ranking', () => {
  it('an OOM whose reading is below the reserved peak (memory taken by another process) proves no room left: a leak is not said to exhaust the device', () => {
    const s = generated({ events: 20_000, seed: 41, leakBytes: 16 * MiB, oomCause: 'outside' });
    const { findings } = diagnose(s, s.devices[0]!);
    const leak = findings.find((f) => f.kind === 'leak')!;
    expect(leak.severity).not.toBe('exhausts');
    expect(leak.evidence.join('\n')).not.toMatch(/the device left unreserved at the peak/);
  });

  it('an OOM beats any leak, small or large, on its device and across the file', () => {
    for (const leakBytes of [3 * MiB, 512 * MiB]) {
      const s = generated({ events: 20_000, seed: 41, leakBytes, oomCause: 'exhaustion' });
      const { findings } = diagnose(s, s.devices[0]!);
      expect(findings[0]!.kind, `leak of ${leakBytes}`).toBe('oom');
      expect(index(findings, 'leak')).toBeGreaterThan(0);
    }
  });

  it('a small leak does not beat a large fragmentation cost, unless its growth would fill the device within the run', () => {
    const s = generated({ events: 20_000, seed: 41, leakBytes: 3 * MiB });
    const d = s.devices[0]!;
    for (const capacity of [undefined, 80 * GiB]) {
      const { findings } = diagnose(s, d, capacity === undefined ? {} : { capacity });
      const leak = findings[index(findings, 'leak')]!;
      const frag = findings[index(findings, 'fragmentation')]!;
      expect(frag.stake_bytes).toBeGreaterThan(100 * leak.stake_bytes);
      expect(index(findings, 'fragmentation'), `capacity ${capacity}`).toBeLessThan(index(findings, 'leak'));
      expect(leak.severity).toBe('cost');
    }
    // A device with only a few MiB left above the reserved peak: the same leak would fill it.
    const { findings } = diagnose(s, d, { capacity: d.totals.peak.reserved + 4 * MiB });
    expect(findings[0]!.kind).toBe('leak');
    expect(findings[0]!.severity).toBe('exhausts');
    expect(findings[0]!.evidence[0]).toMatch(
      /more than the 4\.00 MiB the device left unreserved at the peak/,
    );
  });

  it('across devices: the worst finding of any device leads the order', () => {
    const s = generated({
      events: 4000,
      seed: 7,
      devices: 3,
      devicePlants: { 2: { oomCause: 'fragmentation' } },
    });
    const r = diagnoseFile(s, s.devices);
    expect(r.order[0]).toEqual({ device: 2, finding: 0 });
    expect(r.devices[2]!.findings[0]!.kind).toBe('oom');
    expect(r.devices[2]!.findings[0]!.command).toMatch(/^memlens oom FILE --device 2$/);
    expect(r.order).toHaveLength(r.devices.reduce((n, d) => n + d.findings.length, 0));
  });
});

describe('every OOM, and headlines that fit and agree with their evidence', () => {
  it('every OOM gets a finding: a retried request is one, counted; a different request is another', () => {
    const s = generated({ events: 3000, seed: 5, oom: true, oomRetries: 2 });
    const ooms = diagnose(s, s.devices[0]!).findings.filter((f) => f.kind === 'oom');
    expect(ooms.map((f) => f.figures.ooms)).toEqual([3, 1]);
    // Every entry of the group, for whoever shows one of them (the timeline's OOM pane).
    expect(ooms.map((f) => f.entries?.length)).toEqual([3, 1]);
    expect(ooms[0]!.entries![0]).toBe(ooms[0]!.figures.entry);
    expect(ooms[0]!.headline).toMatch(
      /^Out of memory 3 times \(a [\d.]+ GiB request, first at entry [\d,]+\)/,
    );
    expect(ooms[0]!.evidence[0]).toMatch(
      /failed 3 times, with the same verdict: entries [\d,]+, [\d,]+, [\d,]+;/,
    );
    for (const f of ooms) expect(headlineLines(f)).toBeLessThanOrEqual(2);
  });

  it('each OOM cause, with and without the capacity: a headline of at most two lines at 100 columns', () => {
    for (const cause of OOM_CAUSES)
      for (const capacity of [undefined, 80 * GiB]) {
        const s = generated({ events: 3000, seed: 61, oomCause: cause });
        const [oom] = diagnose(s, s.devices[0]!, capacity === undefined ? {} : { capacity }).findings;
        expect(oom!.kind).toBe('oom');
        expect(headlineLines(oom!), oom!.headline).toBeLessThanOrEqual(2);
        // The arithmetic is in the evidence, not the headline.
        expect(oom!.headline).not.toMatch(/[<≥]/);
        expect(oom!.evidence.some((e) => /[<≥=]/.test(e))).toBe(true);
      }
  });

  it('every headline but the notes fits two lines at 100 columns, on generated and corpus files', () => {
    const files = [
      generated({ events: 20_000, seed: 41, leakBytes: 3 * MiB }),
      generated({ events: 25_000, seed: 51, cycleBytes: [2 * MiB, 3 * MiB + 100], gcEvery: 4 }),
      generated({ events: 4000, seed: 7, devices: 3, devicePlants: { 2: { oomCause: 'fragmentation' } } }),
      ...CORPUS_FILES.map((f) => loadSnapshotBytes(readFileSync(join(CORPUS, f)))),
    ];
    for (const s of files)
      for (const d of diagnoseFile(s, s.devices).devices)
        for (const f of d.findings.filter((x) => x.severity !== 'note'))
          expect(headlineLines(f), f.headline).toBeLessThanOrEqual(2);
  });

  it('the undetermined OOM carries both readings', () => {
    const s = generated({ events: 3000, seed: 61, oomCause: 'outside' });
    const [oom] = diagnose(s, s.devices[0]!).findings;
    expect(oom!.figures.verdict).toBe('undetermined');
    expect(oom!.readings?.map((r) => r.verdict)).toEqual(['outside PyTorch', expect.any(String)]);
  });

  it('a site that grows while allocated memory overall falls: the headline says so', () => {
    const s = generated({ events: 20_000, seed: 41, leakBytes: 3 * MiB });
    const r = leaksOf(s, s.devices[0]!);
    const site = r.groups.find((g) => g.accumulating)!;
    const falling = { ...r, allocated_growth_bytes_per_iteration: -139 * MiB };
    const f = leakFinding(site, falling, 'memlens leaks FILE', null);
    expect(f.headline).toMatch(/keeps 3\.00 MiB per iteration.*while allocated memory overall falls\.$/);
    expect(f.evidence.join('\n')).not.toMatch(/grows by -/);
    expect(f.evidence.join('\n')).toMatch(/allocated memory overall falls by 139 MiB per iteration/);
    // Growing together: no "falls".
    expect(leakFinding(site, r, 'memlens leaks FILE', null).headline).not.toMatch(/falls/);
  });

  it('a leak whose stack holds no Python frame names its backward operation and the missing forward code', () => {
    const s = generated({ events: 20_000, seed: 41, leakBytes: 3 * MiB });
    const r = leaksOf(s, s.devices[0]!);
    const site = r.groups.find((g) => g.accumulating)!;
    const cpp = [
      {
        name: 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(…)',
        filename: '',
        line: 0,
      },
      {
        name: 'torch::autograd::generated::MulBackward0::apply(std::vector<at::Tensor>&&)',
        filename: 'Functions.cpp',
        line: 0,
      },
      { name: 'torch::autograd::Engine::thread_main(…)', filename: 'engine.cpp', line: 0 },
    ].map((f) => ({ ...f, extra: undefined }));
    const f = leakFinding({ ...site, frames: cpp }, r, 'memlens leaks FILE', null);
    expect(f.headline).toMatch(/^Leak: the backward operation MulBackward0 keeps 3\.00 MiB per iteration/);
    expect(f.evidence.join('\n')).toMatch(
      /no Python frame: MulBackward0 allocated it during backward; the forward code .* is not in the trace/,
    );
  });
});
