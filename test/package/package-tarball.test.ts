/**
 * The package as a user installs it: `npm pack`, then the tarball installed into an empty prefix
 * with production dependencies only, and the installed `memlens` run from there (not from this
 * checkout): --version, summary on the bundled example, record with the shipped Python helper,
 * report with the built app inlined, and view serving its page and assets.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), 'memlens-tarball-'));
const prefix = join(work, 'prefix');
const installed = join(prefix, 'node_modules', 'memlens');
const bin = join(prefix, 'node_modules', '.bin', 'memlens');

beforeAll(() => {
  const packed = execFileSync('npm', ['pack', '--pack-destination', work, '--silent'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_ignore_scripts: 'true' },
  });
  const tarball = join(work, packed.trim().split('\n').at(-1)!);
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--omit=dev',
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--silent',
      tarball,
    ],
    { cwd: work, stdio: 'inherit' },
  );
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const memlens = (...args: string[]) => execFileSync(bin, args, { encoding: 'utf8', cwd: work });

describe('the package installed from its tarball', () => {
  it('prints the package version', () => {
    expect(memlens('--version').trim()).toBe(VERSION);
  });

  it('ships the product only: no generator, benchmark, script or test code', () => {
    const shipped = (dir: string): string[] =>
      readdirSync(join(installed, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? shipped(join(dir, e.name)) : [join(dir, e.name)],
      );
    const code = shipped('dist').filter((f) => f.endsWith('.js'));
    expect(code.length).toBeGreaterThan(50);
    const tooling = code.filter((f) =>
      /(^|\/)(bench|scripts|synth|testing|test|helpers)\/|\.test\.js$/.test(f),
    );
    expect(tooling).toEqual([]);
    expect(readdirSync(join(installed, 'dist')).sort()).toEqual([
      'cli',
      'engine',
      'node',
      'server',
      'web',
      'wire',
    ]);
  });

  it('summarises the bundled example', () => {
    const out = JSON.parse(
      memlens('summary', join(installed, 'examples', 'example_snapshot.pickle'), '--json'),
    ) as {
      files: { devices: { trace_entries: number }[] }[];
    };
    expect(out.files[0]!.devices[0]!.trace_entries).toBe(2043);
  });

  it('records a Python program with the helper shipped in the package, without bytecode of ours', () => {
    expect(readdirSync(join(installed, 'python')).sort()).toEqual(['memlens', 'sitecustomize.py']);
    const out = join(work, 'recorded');
    const printed = execFileSync(
      bin,
      [
        'record',
        '--out',
        out,
        '--',
        '/usr/bin/python3',
        '-c',
        'import torch, memlens; print(memlens.__file__)',
      ],
      { encoding: 'utf8', cwd: work, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(printed.trim()).toBe(join(installed, 'python', 'memlens', '__init__.py'));
    const torch = execFileSync('/usr/bin/python3', ['-c', 'import torch; print(torch.__version__)'], {
      encoding: 'utf8',
    }).trim();
    expect((JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { torch: string[] }).torch).toEqual([
      torch,
    ]);
  });

  it('writes a one-file report with the app built into the package', () => {
    const page = join(work, 'report.html');
    memlens('report', join(installed, 'examples', 'example_snapshot.pickle'), '-o', page);
    const html = readFileSync(page, 'utf8');
    // The app inlined (no file beside it to load) and the snapshot inside.
    expect(/(?:src|href)="[^"#]+\.(?:js|css)"/.test(html)).toBe(false);
    expect(/<script id="[^"]+" type="application\/octet-stream">/.test(html)).toBe(true);
  });

  it('serves the web app and its assets from the installed package', async () => {
    const child = spawn(bin, ['view', join(installed, 'examples', 'example_snapshot.pickle'), '--json'], {
      cwd: work,
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`view exited with ${code}`)));
      });
      const { url } = JSON.parse(line) as { url: string };
      const page = await (await fetch(url)).text();
      const assets = [...page.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
      expect(assets.length).toBeGreaterThan(0);
      for (const a of assets) expect((await fetch(new URL(a, url))).status, a).toBe(200);
    } finally {
      child.kill('SIGINT');
    }
  });
});
