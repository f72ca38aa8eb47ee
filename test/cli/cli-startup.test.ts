import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandsFor } from '../../src/cli/command-table.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = 'dist/cli/main.js';
const EXAMPLE = 'examples/example_snapshot.pickle';

function registered(register: (p: Command) => void): string[] {
  const program = new Command();
  register(program);
  return program.commands.map((c) => c.name());
}

describe('memlens loads only the command it runs', () => {
  it('each table entry names exactly the commands its module registers', async () => {
    for (const c of COMMANDS) expect(registered(await c.load())).toEqual([...c.names]);
  });

  it('a bare FILE reaches diagnose; help reaches every command', () => {
    expect(commandsFor([EXAMPLE]).flatMap((c) => c.names)).toEqual(['diagnose']);
    expect(commandsFor(['--json', 'summary', 'x']).flatMap((c) => c.names)).toEqual(['summary']);
    expect(commandsFor(['--help'])).toBe(COMMANDS);
    expect(commandsFor(['help'])).toBe(COMMANDS);
  });

  it('--version reaches no command', () => {
    expect(commandsFor(['--version'])).toEqual([]);
    expect(commandsFor(['-V'])).toEqual([]);
  });

  // --version loaded every command (263 modules, the DuckDB binding among them): 4x `node -e 0`.
  // Unbundled, summary loaded 83 modules and diagnose 141: a fifth of a small file's `summary`.
  it.each([
    [['--version'], 5, []],
    [['summary', '--help'], 30, ['@duckdb', '/server/']],
    [['diagnose', '--help'], 50, ['@duckdb', '/server/']],
    [['view', '--help'], 60, ['@duckdb']],
    [['report', '--help'], 60, ['@duckdb']],
  ] as const)('memlens %j loads at most %i modules, none of %j', (args, most, absent) => {
    const loaded = modulesLoaded(args);
    expect(loaded.length).toBeLessThanOrEqual(most);
    const sources = loaded.flatMap(bundledSources);
    expect(sources).toContain('dist/cli/main.js');
    for (const path of absent) expect(sources.filter((u) => u.includes(path))).toEqual([]);
  });

  // Unbundled, each worker thread loaded the engine again module by module: 235 in all.
  it('memlens run loads at most 50 modules, its worker threads included, none of DuckDB', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memlens-run-'));
    for (const rank of [0, 1, 2]) copyFileSync(EXAMPLE, join(dir, `rank${rank}.pickle`));
    const loaded = modulesLoaded(['run', '--no-cache', '--jobs', '2', dir]);
    expect(loaded.filter((u) => u.includes('-worker.js'))).not.toEqual([]);
    expect(loaded.length).toBeLessThanOrEqual(50);
    expect(loaded.flatMap(bundledSources).filter((u) => u.includes('@duckdb'))).toEqual([]);
  });

  // A first Intl.NumberFormat loads ICU's number data: ~10 ms of every command, built at load.
  it.each([['summary', EXAMPLE], [EXAMPLE]])('memlens %s builds no Intl.NumberFormat', (...args) => {
    const dir = mkdtempSync(join(tmpdir(), 'memlens-intl-'));
    const hook = join(dir, 'count-intl.mjs');
    writeFileSync(
      hook,
      "const NF = Intl.NumberFormat; let n = 0;\nIntl.NumberFormat = function (...a) { n++; return new NF(...a); };\nprocess.on('exit', () => process.stderr.write('NUMBER FORMATS ' + n + '\\n'));\n",
    );
    const r = spawnSync(process.execPath, [...NODE_FLAGS, '--import', hook, CLI, ...args], {
      encoding: 'utf8',
    });
    expect(r.stdout).toContain(EXAMPLE);
    expect(r.stderr).toContain('NUMBER FORMATS 0\n');
  });

  it('--help lists every command', () => {
    const help = execFileSync(process.execPath, [...NODE_FLAGS, CLI, '--help'], { encoding: 'utf8' });
    for (const name of COMMANDS.flatMap((c) => c.names)) expect(help).toMatch(new RegExp(`^  ${name} `, 'm'));
  });

  // Loading every command opened ~290 modules at start, and memlens failed under ulimit -n 64.
  it.each([['summary', EXAMPLE], [EXAMPLE]])('starts under ulimit -n 64: memlens %s', (...args) => {
    const cmd = [process.execPath, ...NODE_FLAGS, CLI, ...args].map((a) => `'${a}'`).join(' ');
    const out = execFileSync('bash', ['-c', `ulimit -n 64; exec ${cmd}`], { encoding: 'utf8' });
    expect(out).toContain(EXAMPLE);
  });
});

const BUNDLED = Object.fromEntries(
  ['cli', 'node/workers'].map((dir) => [
    dir,
    JSON.parse(readFileSync(`dist/${dir}/bundled.modules.json`, 'utf8')) as Record<string, string[]>,
  ]),
);

/** What a loaded URL holds: the modules bundled into it (scripts/bundle-cli.mjs lists them), or itself. */
function bundledSources(url: string): string[] {
  const match = /\/dist\/(cli|node\/workers)\/([^/]+)$/.exec(url);
  return (match !== null ? BUNDLED[match[1]!]![match[2]!] : undefined) ?? [url];
}

/** The module URLs Node loads for `memlens ARGS` (an ESM load hook lists them on stderr). */
function modulesLoaded(args: readonly string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-modules-'));
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    "import { writeSync } from 'node:fs';\nexport async function load(url, ctx, next) { writeSync(2, 'LOADED ' + url + '\\n'); return next(url, ctx); }\n",
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`,
  );
  const r = spawnSync(process.execPath, [...NODE_FLAGS, '--import', register, CLI, ...args], {
    encoding: 'utf8',
  });
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
}
