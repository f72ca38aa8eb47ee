import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type WriteOptions } from '../../../../scripts/synth/index.js';
import { OOM_CAUSES } from '../../../../scripts/synth/oom-plant.js';
import { diagnose } from '../../../../src/engine/analyses/diagnosis/diagnosis.js';
import {
  FINDING_KINDS,
  type Finding,
  SEVERITIES,
} from '../../../../src/engine/analyses/diagnosis/finding.js';
import { gcBurstsOf } from '../../../../src/engine/analyses/gc/gc-bursts.js';
import { hasHistory } from '../../../../src/engine/derived/state/has-history.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { Snapshot } from '../../../../src/engine/model/snapshot.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const MiB = 1024 * 1024;

function generated(options: WriteOptions) {
  const g = generateSnapshotBytes(options);
  return { s: loadSnapshotBytes(g.bytes), expected: g.expected, bytes: g.bytes };
}

function kinds(findings: Finding[]): string[] {
  return findings.map((f) => f.kind);
}

/** Findings come worst first: by severity, then bytes at stake (one device: the same memory). */
function expectRanked(findings: Finding[], label = ''): void {
  const rank = findings.map((f) => SEVERITIES.indexOf(f.severity));
  expect(rank, label).toEqual([...rank].sort((a, b) => a - b));
  expect(findings.every((f) => FINDING_KINDS.includes(f.kind) && rank.every((r) => r >= 0))).toBe(true);
  for (const [i, f] of findings.entries()) {
    const next = findings[i + 1];
    if (next?.severity === f.severity) expect(next.stake_bytes, label).toBeLessThanOrEqual(f.stake_bytes);
  }
}

describe('diagnose: the planted cause comes first', () => {
  it('a leak: the leaking site, bytes per iteration, and its held allocations to look at', () => {
    const leak = 3 * MiB;
    for (const extra of [{}, { expandableSegments: true, streams: 2 }] as WriteOptions[]) {
      const { s } = generated({ events: 20_000, seed: 41, leakBytes: leak, ...extra });
      const d = s.devices[0]!;
      const { findings } = diagnose(s, d, { file: 'run.pickle' });
      // A 3 MiB-per-step leak ranks below a fragmentation cost of gigabytes; it is still found.
      const first = findings.find((f) => f.kind === 'leak');
      expect(first!.severity).toBe('cost');
      expect(first!.frames[0]).toMatchObject({ name: 'train_step', line: 218 });
      expect(first!.figures.bytes_per_iteration).toBe(leak);
      expect(first!.headline).toMatch(/^Leak: train_step \(.*train\.py:218\) keeps 3\.00 MiB per iteration/);
      expect(first!.command).toBe('memlens leaks run.pickle');
      // The link pins a held allocation of the planted size, and searches its site.
      const show = first!.show;
      expect(show.view).toBe('timeline');
      if (show.view !== 'timeline') return;
      expect(d.allocations.size[show.alloc!]).toBe(leak);
      expect(d.allocations.start[show.alloc!]).toBe(show.entry);
      expect(show.search).toMatch(/^train_step \(.*train\.py:218\)$/);
      expect(kinds(findings).filter((k) => k === 'leak')).toHaveLength(1);
      expect(kinds(findings)).not.toContain('oom');
      expect(kinds(findings)).not.toContain('gc');
      expectRanked(findings);
    }
  });

  it('reference cycles collected every 4 steps: a gc finding, linked to the largest burst', () => {
    const { s, expected } = generated({
      events: 25_000,
      seed: 51,
      cycleBytes: [2 * MiB, 3 * MiB + 100],
      gcEvery: 4,
    });
    const { findings } = diagnose(s, s.devices[0]!);
    const first = findings.find((f) => f.kind === 'gc');
    expect(first!.severity).toBe('cost');
    expect(first!.headline).toMatch(/garbage collector .* every ~4 iterations/);
    const planted = expected.planted![0]!.bursts;
    expect(first!.figures.bursts).toBe(planted.length);
    const largest = planted.reduce((x, y) => (y.bytes > x.bytes ? y : x));
    expect(first!.show).toMatchObject({ view: 'events', first: largest.entry });
    expect(kinds(findings)).not.toContain('leak');
    expectRanked(findings);
  });

  for (const cause of OOM_CAUSES) {
    it(`an OOM from ${cause}: the OOM first, with its verdict, the request's stack and entry`, () => {
      const { s, expected } = generated({ events: 3000, seed: 61, oomCause: cause });
      const facts = expected.oom_causes![0]!;
      const d = s.devices[0]!;
      const { findings } = diagnose(s, d, { capacity: facts.capacity_bytes! });
      const [first] = findings;
      expect(first!.kind).toBe('oom');
      expect(first!.figures.verdict).toBe(facts.verdict);
      expect(first!.figures.requested_bytes).toBe(facts.requested_bytes);
      const entry = first!.figures.entry as number;
      expect(d.trace.action[entry]).toBe(s.traceColumns.actionNames.indexOf('oom'));
      expect(first!.show).toEqual({ view: 'timeline', entry, alloc: null, search: '' });
      expect(first!.frames.length).toBeGreaterThan(0);
      expect(first!.frames[0]!.filename).toMatch(/\.py$/);
      expect(first!.evidence.some((e) => e.startsWith('held then: '))).toBe(true);
      expect(first!.command).toBe(`memlens oom FILE --capacity ${facts.capacity_bytes}`);
      expect(kinds(findings).filter((k) => k === 'oom')).toHaveLength(1);
      // Readable at a glance: sizes in units, never two sizes spelled out in exact bytes.
      expect(first!.headline).not.toMatch(/\d{1,3}(,\d{3}){2,} B/);
      expectRanked(findings);
    });
  }

  it('memory held outside PyTorch, without the capacity: never called exhaustion', () => {
    const { s } = generated({ events: 3000, seed: 61, oomCause: 'outside' });
    const [first] = diagnose(s, s.devices[0]!).findings;
    expect(first!.kind).toBe('oom');
    expect(first!.figures.verdict).not.toBe('exhaustion');
    expect(first!.headline).not.toMatch(/— exhaustion/);
    expect(first!.headline).toMatch(/held outside PyTorch/);
  });

  it('an exhaustion OOM on expandable segments: the OOM first, and no fragmentation claimed', () => {
    const { s } = generated({ events: 3000, seed: 61, oomCause: 'exhaustion', expandableSegments: true });
    const { findings } = diagnose(s, s.devices[0]!);
    expect(findings[0]!.kind).toBe('oom');
    expect(findings[0]!.figures.verdict).toBe('exhaustion');
    expect(kinds(findings)).not.toContain('fragmentation');
  });
});

describe('diagnose: a clean training loop has no leak, no gc burst and no OOM', () => {
  const clean: [string, WriteOptions][] = [
    ['seed 1', { seed: 1 }],
    ['seed 2, three streams', { seed: 2, streams: 3 }],
    ['seed 3, expandable segments', { seed: 3, expandableSegments: true }],
    ['seed 9, pending frees, private pool', { seed: 9, pendingFrees: true, privatePool: true }],
  ];
  for (const [name, options] of clean) {
    it(name, () => {
      const { s } = generated({ events: 25_000, ...options });
      for (const d of s.devices) {
        const { findings } = diagnose(s, d);
        expect(kinds(findings)).not.toContain('oom');
        expect(kinds(findings)).not.toContain('leak');
        expect(kinds(findings)).not.toContain('gc');
        expect(findings.some((f) => f.kind === 'peak')).toBe(true);
        // A clean file says what was looked for, so silence never stands for "no leak".
        const { checked } = diagnose(s, d);
        expect(checked[0]).toBe(`no OOM in the trace's ${d.trace.length.toLocaleString('en-US')} entries`);
        expect(checked[1]).toMatch(/^no allocation site accumulates over \d+ iterations$/);
        expect(checked[2]).toBe('no burst of long-lived frees');
        // Reserved stays within a few percent of allocated: caching cost nothing worth a finding.
        const { peak } = d.totals;
        if (peak.reserved - peak.allocated < 0.05 * peak.reserved)
          expect(kinds(findings)).not.toContain('fragmentation');
        expectRanked(findings, name);
      }
    });
  }
});

describe('diagnose: what a file cannot tell is said, not passed over', () => {
  it('a trace of one step: leaks not judged, and not listed as checked', () => {
    const { s } = generated({ events: 1500, seed: 5 });
    const { findings, checked } = diagnose(s, s.devices[0]!);
    const note = findings.find((f) => f.headline.startsWith('Leaks could not be judged'));
    expect(note?.kind).toBe('warning');
    expect(note!.headline).toMatch(/only 1 iteration was found/);
    expect(checked.join(' ')).not.toMatch(/accumulates/);
  });
});

describe.skipIf(corpus.length === 0)('diagnose on the real corpus', () => {
  const load = (file: string): Snapshot =>
    loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));

  it('runs on every file: ranked findings, each a sentence with a command, the peak always among them', () => {
    for (const file of corpus) {
      const s = load(file);
      for (const d of s.devices) {
        const { findings } = diagnose(s, d, { file });
        expectRanked(findings, file);
        expect(findings.some((f) => f.kind === 'peak') || d.allocations.count === 0, file).toBe(true);
        for (const f of findings) {
          expect(f.headline, file).toMatch(/^[A-Z0-9].*\.$/);
          expect(f.headline, file).not.toMatch(/undefined|NaN|null|entry -1/);
          expect(f.command, file).toMatch(/^memlens \w+ /);
        }
        // No corpus file has an oom entry; dump-only files say so first among the warnings.
        expect(kinds(findings)).not.toContain('oom');
        // No trace, or one of snapshot markers only: nothing can be said to be absent.
        if (!hasHistory(d)) {
          expect(findings.find((f) => f.kind === 'warning')!.headline).toMatch(/^Dump only: no trace/);
          expect(diagnose(s, d).checked).toEqual([]);
        }
      }
    }
  });

  it('a file dumped at an OOM with only a snapshot marker in its trace never reads "no OOM"', () => {
    const file = corpus.find((f) => f.startsWith('Yiyi_LLM-inference__oom_snapshot'));
    if (file === undefined) return;
    const s = load(file);
    const r = diagnose(s, s.devices[0]!);
    expect(r.checked).toEqual([]);
    expect(r.findings[0]!.headline).toMatch(/^At the dump /);
    expect(r.findings.find((f) => f.kind === 'warning')!.headline).toMatch(
      /^Dump only: no trace recorded \(the trace holds only 1 snapshot marker\)/,
    );
  });

  it('bursts that code freed (not the collector) are no gc finding', () => {
    const slime = corpus.find((f) => f.startsWith('THUDM_slime__'));
    if (slime === undefined) return;
    const s = load(slime);
    const d = s.devices[0]!;
    expect(gcBurstsOf(s, d).bursts.length).toBeGreaterThan(0);
    expect(kinds(diagnose(s, d).findings)).not.toContain('gc');
  });
});

describe('memlens diagnose (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-diagnose-'));
  const oomFile = join(dir, 'oom.pickle');
  writeFileSync(oomFile, generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes);
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

  it('prints the findings in order with the command for each; `memlens FILE` is the same', () => {
    const r = run('diagnose', oomFile);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(oomFile);
    expect(lines[1]).toBe('cuda:0');
    expect(lines[2]).toMatch(
      /^ {2}1\. OOM +Out of memory at entry [\d,]+ \(a 1\.05 GiB request\) — fragmentation: /,
    );
    expect(r.stdout).toMatch(/stack of the failing request \(innermost first\):\n +forward \(/);
    expect(r.stdout).toContain(`$ memlens oom ${oomFile}\n`);
    expect(r.stdout).toMatch(/ {2}\d\. PEAK +At the allocated peak/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(run(oomFile).stdout).toBe(r.stdout);
  });

  it('--json: files, devices, findings with kind, headline and evidence', () => {
    const r = run('diagnose', '--json', '--capacity', '80GiB', oomFile);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.files).toHaveLength(1);
    expect(doc.files[0].file).toBe(oomFile);
    const [device] = doc.files[0].devices;
    expect(device.device).toBe(0);
    expect(device.findings[0]).toMatchObject({ kind: 'oom', figures: { verdict: 'fragmentation' } });
    for (const f of device.findings) {
      expect(FINDING_KINDS).toContain(f.kind);
      expect(typeof f.headline).toBe('string');
      expect(Array.isArray(f.evidence)).toBe(true);
      expect(typeof f.command).toBe('string');
    }
    expect(device.findings[0].command).toContain(`--capacity ${80 * 1024 ** 3}`);
  });

  it('--help still lists the commands; no file shows them too; a bad file is one line', () => {
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/diagnose \[options\]/);
    expect(help.stdout).toMatch(/\n {2}summary /);
    const bare = run();
    expect(bare.status).not.toBe(0);
    expect(bare.stderr).toMatch(/Usage: memlens/);
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'hello\n');
    const bad = run(text);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain(text);
  });
});
