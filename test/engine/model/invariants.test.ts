import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { pickleDumps } from '../../../src/engine/encode/pickle-writer.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { NODE_FLAGS } from '../../../src/node/node-flags.js';
import { type ImpossibleCase, impossibleCases } from '../../helpers/impossible.js';

/**
 * Impossible snapshots (made by the project's script, dist-tools/scripts/make-impossible.js): memlens
 * names each impossibility with its count and first offender, in the text and the --json
 * warnings, and prints no negative byte count and no total its parts exceed; a file where no
 * figure would be honest is refused in one line with exit 2.
 */
const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const SCRIPT = join(ROOT, 'dist-tools', 'scripts', 'make-impossible.js');
const CASES = impossibleCases();
let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlens-impossible-'));
  execFileSync(process.execPath, [SCRIPT, dir]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A byte count below zero as memlens prints them ("-188 MiB", "-38.5 MiB"). */
const NEGATIVE_BYTES = /(^|[\s(│|])-\d[\d.,]*\s?(B|KiB|MiB|GiB|TiB)\b/;

/** Every number under a key ending in _bytes, with its path. */
function byteFigures(v: unknown, path = ''): [string, number][] {
  const out: [string, number][] = [];
  const todo: [string, unknown][] = [[path, v]];
  while (todo.length > 0) {
    const [p, x] = todo.pop()!;
    if (Array.isArray(x)) for (const [i, y] of x.entries()) todo.push([`${p}[${i}]`, y]);
    else if (x !== null && typeof x === 'object')
      for (const [k, y] of Object.entries(x)) {
        if (typeof y === 'number' && /_bytes$|^size$/.test(k)) out.push([`${p}.${k}`, y]);
        else todo.push([`${p}.${k}`, y]);
      }
  }
  return out;
}

function expectNoImpossibleFigures(c: ImpossibleCase, text: string, json: unknown): void {
  // The warnings quote the file's impossible values; the figures are everything else. A warning
  // wraps onto lines indented under it.
  let inWarning = false;
  const figures = text.split('\n').filter((l) => {
    inWarning = l.startsWith('  warning:') || (inWarning && l.startsWith('    '));
    return !inWarning;
  });
  for (const line of figures) expect(line, c.name).not.toMatch(NEGATIVE_BYTES);
  const negative = byteFigures(json).filter(([, n]) => n < 0);
  expect(negative, c.name).toEqual([]);
}

describe('impossible snapshots', () => {
  it('the script writes every case and what memlens must say about it', () => {
    const names = readdirSync(dir).filter((f) => f.endsWith('.pickle'));
    expect(names.sort()).toEqual(CASES.map((c) => `${c.name}.pickle`).sort());
    for (const c of CASES) {
      const expected = JSON.parse(readFileSync(join(dir, `${c.name}.expected.json`), 'utf8'));
      expect(expected).toMatchObject({ kind: c.kind, first: c.first, refused: c.refused });
    }
  });

  for (const c of CASES.filter((x) => !x.refused)) {
    it(`${c.name} (${c.says}): named in the warnings, no negative or contradicted figure`, () => {
      const file = join(dir, `${c.name}.pickle`);
      const text = run('summary', file);
      expect(text.status, text.stderr).toBe(0);
      // A long warning wraps at 100 columns when piped: read each one whole.
      const warning = text.stdout
        .replace(/\n {4,}/g, ' ')
        .split('\n')
        .find((l) => l.includes(c.first));
      expect(warning, text.stdout).toMatch(/warning: impossible in this file: \d+ /);
      const summary = run('summary', file, '--json');
      const s = JSON.parse(summary.stdout).files[0];
      expect(s.warnings.some((w: string) => w.includes(c.first))).toBe(true);
      expectNoImpossibleFigures(c, text.stdout, s);
      for (const d of s.devices) {
        // A total never contradicts its parts.
        expect(d.active_bytes, c.name).toBeLessThanOrEqual(d.reserved_bytes);
        expect(d.allocated_bytes, c.name).toBeLessThanOrEqual(d.active_bytes);
        expect(d.requested_bytes, c.name).toBeLessThanOrEqual(d.active_bytes);
        const pools = Object.values(d.pools as Record<string, { reserved_bytes: number }>);
        expect(pools.reduce((n, p) => n + p.reserved_bytes, 0)).toBe(d.reserved_bytes);
        // memory_summary: the peak of both pools together is never above the pools' peaks added.
        const rows = d.memory_summary as { metric: string; pool: string; peak: number | null }[];
        for (const metric of new Set(rows.map((r) => r.metric))) {
          const peak = (pool: string) =>
            rows.find((r) => r.metric === metric && r.pool === pool)?.peak ?? null;
          if (peak('all') === null) continue;
          expect(peak('all')!, `${c.name}: ${metric}`).toBeLessThanOrEqual(peak('large')! + peak('small')!);
        }
      }
      const frag = run('frag', file, '--json');
      expect(frag.status, frag.stderr).toBe(0);
      const f = JSON.parse(frag.stdout).files[0];
      expectNoImpossibleFigures(c, run('frag', file).stdout, f);
      for (const d of f.devices) {
        const dump = d.dump;
        expect(dump.used_bytes + dump.free_bytes, c.name).toBeLessThanOrEqual(dump.reserved_bytes);
        expect(dump.inactive_split_bytes, c.name).toBeLessThanOrEqual(dump.free_bytes);
        for (const p of d.curve)
          expect(p.allocated_bytes, `${c.name} after ${p.after_entry}`).toBeLessThanOrEqual(p.reserved_bytes);
      }
    });
  }

  for (const c of CASES.filter((x) => x.refused)) {
    it(`${c.name} (${c.says}): refused in one line, exit 2`, () => {
      const file = join(dir, `${c.name}.pickle`);
      const r = run('summary', file);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toContain(`memlens: ${file}: no figure would be honest`);
      expect(lines[0]).toContain(c.first);
    });
  }

  it('the model names each violation once, with its count and first offender', () => {
    for (const c of CASES.filter((x) => !x.refused)) {
      const s = loadSnapshotBytes(pickleDumps(c.value));
      const v = s.violations.find((x) => x.kind === c.kind);
      expect(v, c.name).toBeDefined();
      expect(v!.first, c.name).toContain(c.first);
      expect(v!.count).toBeGreaterThan(0);
      expect(new Set(s.violations.map((x) => x.kind)).size).toBe(s.violations.length);
    }
  });

  it('files the allocator could have written have no violation', () => {
    for (const opts of [
      { events: 3000, seed: 5 },
      { events: 3000, seed: 6, expandableSegments: true },
      { events: 3000, seed: 7, ringBufferOverflow: true, devices: 2, streams: 2 },
      { events: 3000, seed: 8, pendingFrees: true, privatePool: true, oom: true },
    ]) {
      const s = loadSnapshotBytes(generateSnapshotBytes(opts).bytes);
      expect(s.violations, JSON.stringify(opts)).toEqual([]);
    }
  });
});
