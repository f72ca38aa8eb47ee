import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { ALWAYS_HASHED_BYTES, hashIndexFile } from '../../src/node/cache/result-cache.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { CLI, scratchDir } from '../helpers/cli-scratch.js';

/**
 * `memlens sql`'s export cache does each thing once: an unchanged large file is not read again to
 * find its export, a run folder is scanned once, and a disk that fills up while the export is
 * written into the cache still gets the query answered.
 */
const work = scratchDir('memlens-sql-cache');

function sql(cacheHome: string, query: string, ...paths: string[]): SpawnSyncReturns<string> {
  return spawnSync('node', [...NODE_FLAGS, CLI, 'sql', query, ...paths, '--format', 'csv'], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
  });
}

const exportsIn = (home: string) => readdirSync(join(home, 'memlens', 'parquet'));

describe('the export cache key of a large file', () => {
  const big = join(work, 'big.pickle');
  const bytes = Buffer.from(generateSnapshotBytes({ events: 40000, seed: 4 }).bytes);
  writeFileSync(big, bytes);
  const home = join(work, 'home-big');
  const FRAMES = "SELECT count(*) AS n FROM frames WHERE filename LIKE '%/train.py'";
  // One letter of a frame's file name, changed in place: the same size, and the same inode.
  const at = bytes.lastIndexOf('gpt/train.py') + 'gpt/t'.length;
  const rewrite = (mtime: number, letter: string) => {
    const fd = openSync(big, 'r+');
    writeSync(fd, Buffer.from(letter), 0, 1, at);
    closeSync(fd);
    utimesSync(big, mtime, mtime);
  };

  it('is kept in the stat index, and a file rewritten in place with its mtime restored is seen', () => {
    expect(bytes.length).toBeGreaterThan(ALWAYS_HASHED_BYTES);
    expect(at).toBeGreaterThan(5);
    utimesSync(big, 1e9, 1e9);
    const first = sql(home, FRAMES, big).stdout;
    expect(first).toMatch(/^n\n[1-9]\d*\n$/);
    expect(exportsIn(home)).toHaveLength(1);
    // The unchanged file is known by its stat: the next query does not read it to find its export.
    const index = JSON.parse(readFileSync(hashIndexFile(join(home, 'memlens')), 'utf8'));
    expect(Object.keys(index).some((k) => k.startsWith(`${big}\u0000`))).toBe(true);
    expect(sql(home, FRAMES, big).stdout).toBe(first);
    expect(exportsIn(home)).toHaveLength(1);
    // Size, mtime and inode restored, but its ctime moved: the new content, not the old figures.
    rewrite(1e9, 'e');
    expect(sql(home, FRAMES, big).stdout).not.toBe(first);
    expect(exportsIn(home)).toHaveLength(2);
  });

  it('a file whose mtime changed is read again, and its new content exported', () => {
    const before = sql(home, FRAMES, big).stdout;
    // The letter put back: the first content again, whose export is still cached.
    rewrite(1e9 + 60, 'r');
    expect(sql(home, FRAMES, big).stdout).not.toBe(before);
    expect(exportsIn(home)).toHaveLength(2);
  });
});

describe('a run folder given to sql', () => {
  const run = join(work, 'run');
  for (const step of [1, 2]) {
    mkdirSync(join(run, `step${step}`), { recursive: true });
    writeFileSync(
      join(run, `step${step}`, 'torch_memory_rank0_pid1.pickle'),
      generateSnapshotBytes({ events: 300, seed: step }).bytes,
    );
  }
  writeFileSync(join(run, 'notes.txt'), 'not a snapshot');

  it('is scanned once on its first export: what was left out is said once', () => {
    const r = sql(join(work, 'home-run'), 'SELECT count(*) AS n FROM snapshots', run);
    expect(r.stdout).toBe('n\n2\n');
    expect(r.stderr.match(/skipped 1 file that is not a snapshot/g)).toHaveLength(1);
  });
});

/** Whether this system lets a test mount a small tmpfs in a namespace of its own (util-linux unshare). */
const canMount =
  spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=64k none /mnt']).status === 0;

describe('a cache that fills up while the export is written', () => {
  const file = join(work, 'gen.pickle');
  writeFileSync(file, generateSnapshotBytes({ events: 1200, seed: 4 }).bytes);

  it.skipIf(!canMount)('answers the query anyway, says why in one line, and leaves no entry', () => {
    const home = join(work, 'full');
    const left = join(work, 'left-in-cache.txt');
    mkdirSync(home);
    // A cache home on a 48 KiB file system: writable when checked, full during the export.
    const script = `mount -t tmpfs -o size=48k none "$1" || exit 99
      XDG_CACHE_HOME="$1" node ${NODE_FLAGS.join(' ')} "$2" sql 'SELECT count(*) AS n FROM snapshots' "$3" --format csv
      rc=$?; find "$1/memlens/parquet" -mindepth 1 > "$4"; exit $rc`;
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', script, 'sh', home, CLI, file, left], {
      encoding: 'utf8',
    });
    expect(r.stdout).toBe('n\n1\n');
    expect(r.stderr).toMatch(
      /^memlens: [^\n]*full\/memlens\/parquet: cannot write the cache \(ENOSPC\); exporting for this query only\n$/,
    );
    expect(r.status).toBe(0);
    expect(readFileSync(left, 'utf8')).toBe('');
  });

  it.skipIf(!canMount)('a full temporary folder is named as such, once, not blamed on the cache', () => {
    const tmp = join(work, 'full-tmp');
    mkdirSync(tmp);
    const script = `mount -t tmpfs -o size=40k none "$1" || exit 99
      TMPDIR="$1" XDG_CACHE_HOME="$2" node ${NODE_FLAGS.join(' ')} "$3" sql 'SELECT count(*) AS n FROM blocks' "$4" --format csv`;
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', script, 'sh', tmp, join(work, 'roomy'), CLI, file], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).not.toMatch(/cannot write the cache/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`ENOSPC.*${tmp}`));
  });
});
