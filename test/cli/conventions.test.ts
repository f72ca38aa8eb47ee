import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { plural } from '../../src/engine/base/format.js';
import { parseRangeText } from '../../src/engine/base/units.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const CORPUS = join(ROOT, '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const dir = mkdtempSync(join(tmpdir(), 'memlens-conventions-'));
const file = join(dir, 'small.pickle');
writeFileSync(file, generateSnapshotBytes({ events: 5000, seed: 63 }).bytes);
const run = (...args: string[]) =>
  spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', timeout: 170_000 });

describe('counts agree in number', () => {
  it('plural', () => {
    expect(plural(1, 'block')).toBe('1 block');
    expect(plural(0, 'block')).toBe('0 blocks');
    expect(plural(2, 'entry')).toBe('2 entries');
    expect(plural(1, 'entry')).toBe('1 entry');
    expect(plural(20047, 'allocation')).toBe('20,047 allocations');
    expect(plural(3, 'day')).toBe('3 days');
  });

  it.skipIf(corpus.length === 0)(
    'no "1 blocks", "1 entries", "1 segments" in the corpus reports',
    () => {
      const r = run('summary', ...corpus.map((f) => join(CORPUS, f)));
      expect(r.stdout).not.toMatch(
        /(^|[^\d,.])1 (blocks|allocations|segments|entries|iterations|bursts|sites|allocs)\b/m,
      );
      // The corpus has such counts (a one-entry trace, a pool of one segment): the check bites.
      expect(r.stdout).toMatch(/(^|[^\d,.])1 (segment|entry)\b/m);
    },
    180_000,
  );
});

describe('--json on every command', () => {
  it('events and blocks: --json is --format json', () => {
    for (const table of ['events', 'blocks']) {
      const a = run(table, file, '--json', '--limit', '5');
      const b = run(table, file, '--format', 'json', '--limit', '5');
      expect(a.status).toBe(0);
      expect(a.stdout).toBe(b.stdout);
      expect(JSON.parse(a.stdout).files[0].devices[0].rows).toHaveLength(5);
    }
  });

  it('view --json prints where it serves as one JSON line', async () => {
    if (!existsSync(join(ROOT, 'dist', 'web', 'index.html'))) return;
    const child = spawn(process.execPath, [...NODE_FLAGS, CLI, 'view', file, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const line = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
    });
    child.kill('SIGTERM');
    const served = JSON.parse(line) as { url: string; files: unknown[] };
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(served.files).toHaveLength(1);
  });

  it('every command lists --json in its help', () => {
    const help = run('--help').stdout;
    const commands = [...help.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands.length).toBeGreaterThan(10);
    for (const c of commands) expect(run(c, '--help').stdout, c).toMatch(/--json\b/);
  }, 120_000);
});

describe('entries as printed', () => {
  it('ranges take thousands separators; either side may be left out', () => {
    expect(parseRangeText('20,047:30,000')).toEqual([20047, 30000]);
    expect(parseRangeText(':1,000')).toEqual([0, 1000]);
    expect(parseRangeText('5:')).toEqual([5, Number.MAX_SAFE_INTEGER]);
    expect(parseRangeText('1000-2000')).toBeNull();
    expect(parseRangeText('1,00:2')).toBeNull();
  });

  it('frag --at, events --range and leaks --range accept "1,000"', () => {
    expect(run('frag', file, '--at', '1,000').status).toBe(0);
    const events = run('events', file, '--range', '1,000:1,004', '--format', 'json');
    expect(events.status).toBe(0);
    expect(JSON.parse(events.stdout).files[0].devices[0].rows).toHaveLength(5);
    const leaks = JSON.parse(run('leaks', file, '--range', '1,000:2,000', '--json').stdout);
    expect(leaks.files[0].devices[0].unreleased).toMatchObject({ from_entry: 1000, to_entry: 2000 });
  });
});
