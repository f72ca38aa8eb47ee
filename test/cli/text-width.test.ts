import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { fitToWidth, shortenMiddle, visibleLength } from '../../src/cli/text/text-width.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const MiB = 1024 * 1024;
const TABLE = /^\s*[┌│├└]/;

describe('fitting text to a width', () => {
  it('wraps a sentence at spaces under its indent, leaves short lines and tables alone', () => {
    const text = [
      'short',
      `  ${'word '.repeat(30).trim()}`,
      '│ a table row that is long enough to pass the width of the terminal, and stays whole │',
    ].join('\n');
    const lines = fitToWidth(text, 40).split('\n');
    expect(lines[0]).toBe('short');
    expect(lines[1]).toBe(`  ${'word '.repeat(7).trim()}`);
    expect(lines[2]!.startsWith('    word')).toBe(true);
    for (const l of lines.slice(1, -1)) expect(l.length).toBeLessThanOrEqual(40);
    expect(lines.at(-1)).toMatch(/^│ a table row .* stays whole │$/);
    expect(lines.slice(1, -1).join(' ').replace(/\s+/g, ' ').trim()).toBe('word '.repeat(30).trim());
  });

  it('cuts a word too long for any line (a path) in the middle, keeping its end', () => {
    const path = `/very/long/${'directory/'.repeat(12)}model.py:176`;
    const [line] = fitToWidth(`  at ${path}`, 50).split('\n').slice(-1);
    expect(line!.length).toBeLessThanOrEqual(50);
    expect(line).toMatch(/…[^…]*model\.py:176$/);
    expect(shortenMiddle('abcdefghij', 5)).toBe('a…hij');
    expect(shortenMiddle('abc', 5)).toBe('abc');
  });

  it('colour codes take no columns', () => {
    expect(visibleLength('\u001b[1mbold\u001b[22m')).toBe(4);
    expect(fitToWidth(`\u001b[1m${'x'.repeat(10)}\u001b[22m`, 10).split('\n')).toHaveLength(1);
  });
});

describe('memlens text output when piped: at most 100 columns', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-width-'));
  const deep = join(dir, ...Array.from({ length: 8 }, (_, k) => `a-rather-long-directory-name-${k}`));
  mkdirSync(deep, { recursive: true });
  const file = join(deep, 'cycles.pickle');
  writeFileSync(
    file,
    generateSnapshotBytes({ events: 20_000, seed: 62, cycleBytes: [2 * MiB, 2 * MiB], gcEvery: 3 }).bytes,
  );
  for (const command of ['gc', 'leaks', 'summary', 'frag', 'peak', 'oom', 'categories']) {
    it(command, () => {
      const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, command, file], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const lines = r.stdout.split('\n');
      expect(file.length).toBeGreaterThan(100);
      expect(lines[0]).toMatch(/^\/.*….*cycles\.pickle$/);
      for (const l of lines) if (!TABLE.test(l)) expect(l.length, l).toBeLessThanOrEqual(100);
    });
  }
});
