import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { ResultCache } from '../../src/node/cache/result-cache.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

/**
 * A cache that cannot be written costs speed, never the answer; the temporary files a full disk or
 * a kill leaves in it are removed by the next trim once their writer is gone.
 */
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const work = mkdtempSync(join(tmpdir(), 'memlens-cache-unwritable-'));
afterAll(() => {
  chmodSync(join(work, 'read-only'), 0o755);
  rmSync(work, { recursive: true, force: true });
});

const file = join(work, 'gen.pickle');
writeFileSync(file, generateSnapshotBytes({ events: 1200, seed: 4 }).bytes);

function sql(cacheHome: string): SpawnSyncReturns<string> {
  return spawnSync(
    'node',
    [...NODE_FLAGS, CLI, 'sql', 'select count(*) AS n from snapshots', file, '--format', 'csv'],
    {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    },
  );
}

/** The pid of a process that has ended: its temporary files are stale. */
function endedPid(): number {
  return spawnSync('true').pid!;
}

describe('a cache that cannot be written', () => {
  const notADir = join(work, 'a-file');
  writeFileSync(notADir, 'not a directory');
  const readOnly = join(work, 'read-only');
  mkdirSync(readOnly, { mode: 0o555 });
  // Root writes through mode bits: there only the path under a file is unwritable.
  const homes = process.getuid?.() === 0 ? [notADir] : [notADir, readOnly];

  it.each(homes)('sql answers without it (cache home %s), saying so in one line', (home) => {
    const r = sql(home);
    expect(r.stdout).toBe('n\n1\n');
    expect(r.stderr).toMatch(
      /^memlens: [^\n]*: cannot write the cache \([A-Z]+\); exporting for this query only\n$/,
    );
    expect(r.status).toBe(0);
    expect(readdirSync(readOnly)).toEqual([]);
  });
});

const isCount = (v: unknown): v is { n: number } => typeof (v as { n?: unknown } | null)?.n === 'number';

describe('temporary files left in the caches', () => {
  it('the result cache trim removes those of ended processes, keeps a live one', () => {
    const root = join(work, 'results');
    const cache = new ResultCache<{ n: number }>('v', isCount, undefined, root);
    cache.put('a'.repeat(64), { n: 1 });
    cache.close();
    const [dir] = readdirSync(root);
    const cacheDir = join(root, dir!);
    const dead = join(cacheDir, `${'b'.repeat(64)}.json.${endedPid()}.tmp`);
    const live = join(cacheDir, `${'c'.repeat(64)}.json.${process.pid}.tmp`);
    writeFileSync(dead, '');
    writeFileSync(live, '');
    new ResultCache<{ n: number }>('v', isCount, undefined, root).close();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });

  it("sql's next trim removes an export folder left half-written", () => {
    const home = join(work, 'cache');
    expect(sql(home).status).toBe(0);
    const root = join(home, 'memlens', 'parquet');
    const left = join(root, `0123456789abcdef.memlens-${endedPid()}.tmp`);
    mkdirSync(join(left, 'events'), { recursive: true });
    writeFileSync(join(left, 'events', 'part-0-0.parquet'), '');
    expect(sql(home).stdout).toBe('n\n1\n');
    expect(existsSync(left)).toBe(false);
  });
});
