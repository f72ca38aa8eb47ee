import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes, generateSnapshotJson } from '../../scripts/synth/index.js';
import { SCHEMA_VERSION, TABLE_NAMES } from '../../src/engine/export/schema.js';
import { openDuckDb } from '../../src/node/export/duckdb.js';
import { checkManifest, type ExportManifest, MANIFEST } from '../../src/node/export/export-tables.js';
import { sqlFileList, sqlIdentifier, sqlString } from '../../src/node/export/sql-quote.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { rng } from '../helpers/rng.js';

/**
 * `memlens sql` and `export` treat every name and path as data: a manifest's table names are
 * checked against the schema, and names, paths and text reach DuckDB quoted, never as SQL or as
 * glob patterns.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const work = mkdtempSync(join(tmpdir(), 'memlens-sql-hostile-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function memlens(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync('node', [...NODE_FLAGS, CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: join(work, 'cache') },
  });
}

const file = join(work, 'gen.pickle');
writeFileSync(file, generateSnapshotBytes({ events: 1500, seed: 5 }).bytes);
const exported = join(work, 'export');

/** Characters that end literals, identifiers, statements or make globs. */
const HOSTILE = ["'", '"', ';', '[', ']', '*', '?', '{', '}', '\\', '\n', ' ', '-', '/', '\0', 'a', 'é'];

function hostileText(next: (n: number) => number, length: number): string {
  return Array.from({ length }, () => HOSTILE[next(HOSTILE.length)]!).join('');
}

describe('an export folder is data, not SQL', () => {
  it('exports once for the cases below', () => {
    expect(memlens('export', file, '-o', exported).status).toBe(0);
  });

  it("a crafted manifest's table name is refused: one line, exit 2, no file written", () => {
    const dir = join(work, 'crafted');
    cpSync(exported, dir, { recursive: true });
    const target = join(work, 'owned.csv');
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as ExportManifest;
    const name = `snapshots AS SELECT 1; COPY (SELECT 'owned') TO '${target}'; CREATE VIEW zz`;
    writeFileSync(join(dir, MANIFEST), JSON.stringify({ ...manifest, tables: [name] }));
    const r = memlens('sql', 'select 42', dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^memlens: .*memlens-export\.json: not a memlens export manifest \(unknown table [^\n]*\)\n$/,
    );
    expect(r.stdout).toBe('');
    expect(existsSync(target)).toBe(false);
  });

  it('an export of another schema is refused in one line, not queried with columns it lacks', () => {
    const dir = join(work, 'old-schema');
    cpSync(exported, dir, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as ExportManifest;
    writeFileSync(join(dir, MANIFEST), JSON.stringify({ ...manifest, schema_version: SCHEMA_VERSION + 1 }));
    const r = memlens('sql', 'select count(*) from events', dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        `^memlens: .*old-schema/memlens-export\\.json: an export of schema ${SCHEMA_VERSION + 1}; this memlens reads schema ${SCHEMA_VERSION} \\(export the snapshots again\\)\n$`,
      ),
    );
    expect(r.stdout).toBe('');
  });

  it("another memlens version never reads this one's cached export (a figure it computes differently would be stale)", () => {
    // The same build under another version number: a copy of dist/ beside a package.json that says so.
    const pkg = join(work, 'other-version');
    cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
    const json = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ ...json, version: `${json.version}-other` }));
    symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
    const cache = join(work, 'version-cache');
    const sql = (cli: string) =>
      spawnSync('node', [...NODE_FLAGS, cli, 'sql', 'select count(*) as n from events', file], {
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: cache },
      });
    const first = sql(CLI);
    expect(first.status, first.stderr).toBe(0);
    expect(readdirSync(join(cache, 'memlens', 'parquet'))).toHaveLength(1);
    const other = sql(join(pkg, 'dist', 'cli', 'main.js'));
    expect(other.status, other.stderr).toBe(0);
    expect(other.stdout).toBe(first.stdout);
    expect(readdirSync(join(cache, 'memlens', 'parquet'))).toHaveLength(2);
  });

  it('fuzz: a manifest naming any other table is refused, whatever its characters', () => {
    const next = rng(2207);
    for (let i = 0; i < 300; i++) {
      const name = hostileText(next, 1 + next(24));
      const m = { schema_version: 1, format: 'parquet', partitioned: false, tables: [name], snapshots: [] };
      expect(() => checkManifest(work, m as unknown as ExportManifest), JSON.stringify(name)).toThrow(
        /not a memlens export manifest \(unknown table /,
      );
    }
    const good = {
      schema_version: 1,
      format: 'parquet',
      partitioned: false,
      tables: TABLE_NAMES,
      snapshots: [],
    };
    expect(() => checkManifest(work, good as ExportManifest)).not.toThrow();
  });

  it('fuzz: quoted strings, names and file paths reach DuckDB as the very values', async () => {
    const db = await openDuckDb();
    try {
      const next = rng(91);
      const dirs = join(work, 'paths');
      for (let i = 0; i < 40; i++) {
        const text = hostileText(next, next(20));
        const literal = await db.con.runAndReadAll(`SELECT ${sqlString(text)} AS v`);
        expect(literal.getRowsJS()[0]![0], JSON.stringify(text)).toBe(text);
        const name = text.replaceAll('\0', '') || 'x';
        await db.con.run(`CREATE OR REPLACE VIEW ${sqlIdentifier(name)} AS SELECT ${i} AS v`);
        const view = await db.con.runAndReadAll(`SELECT v FROM ${sqlIdentifier(name)}`);
        expect(view.getRowsJS()[0]![0], JSON.stringify(name)).toBe(i);
        // A path: no NUL, no slash in a name; a sibling that the pattern would also match first.
        const part = hostileText(next, 1 + next(12)).replace(/[\0/]/g, '_');
        const dir = join(dirs, String(i));
        for (const [name, v] of [
          [part.replace(/[^a-z]/g, 'a'), -1],
          [part, i],
        ] as const) {
          mkdirSync(join(dir, name), { recursive: true });
          const out = join(dir, name, 'f.parquet');
          if (!existsSync(out))
            await db.con.run(`COPY (SELECT ${v} AS v) TO ${sqlString(out)} (FORMAT parquet)`);
        }
        const path = join(dir, part, 'f.parquet');
        if (/[*?[]/.test(path) && path.includes('\\')) {
          expect(() => sqlFileList([path])).toThrow(/DuckDB cannot read a path holding/);
          continue;
        }
        const read = await db.con.runAndReadAll(`SELECT v FROM read_parquet(${sqlFileList([path])})`);
        expect(read.getRowsJS(), JSON.stringify(part)).toEqual([[i]]);
      }
    } finally {
      db.close();
    }
  });
});

describe('paths with glob characters are names', () => {
  it("sql over 'out[1]' reads out[1]'s export, not out1's", () => {
    const glob = join(work, 'out[1]');
    const plain = join(work, 'out1');
    expect(memlens('export', file, '-o', glob).status).toBe(0);
    const other = join(work, 'other.pickle');
    writeFileSync(other, generateSnapshotBytes({ events: 400, seed: 6 }).bytes);
    expect(memlens('export', other, '-o', plain).status).toBe(0);
    const count = (dir: string) => memlens('sql', 'select count(*) AS n from events', dir, '--format', 'csv');
    const want = count(exported).stdout;
    expect(count(plain).stdout).not.toBe(want);
    expect(count(glob)).toMatchObject({ status: 0, stdout: want, stderr: '' });
  });

  it('a cache directory with [ in its path still serves sql', () => {
    const r = spawnSync('node', [...NODE_FLAGS, CLI, 'sql', 'select count(*) AS n from frames', file], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: join(work, 'cache[x]') },
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('a NUL byte in a frame name', () => {
  const { json } = generateSnapshotJson({ events: 1500, seed: 8 });
  const nul = join(work, 'nul.json');
  // The first frame's name, as JSON text: "name":"nul\u0000…".
  writeFileSync(nul, json.replace(/("frames":\s*\[\s*\{[^\]]*?"name":\s*")/, '$1nul\\u0000'));

  it('export and sql keep it', () => {
    const out = join(work, 'nul-export');
    expect(memlens('export', nul, '-o', out)).toMatchObject({ status: 0 });
    expect(readdirSync(out)).toContain(MANIFEST);
    const q = "select count(*) AS n from frames where starts_with(name, concat('nul', chr(0)))";
    const r = memlens('sql', q, out, '--format', 'csv');
    expect(r).toMatchObject({ status: 0, stderr: '' });
    expect(Number(r.stdout.split('\n')[1])).toBeGreaterThan(0);
    expect(memlens('sql', q, nul, '--format', 'csv').stdout).toBe(r.stdout);
  });
});
