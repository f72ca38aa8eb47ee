import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { CLI, type RunningView, startView } from '../helpers/view-server.js';

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'example_snapshot.pickle');

/** Raw GET, so paths like /../ reach the server unnormalised, with any Host header. */
function get(origin: string, path: string, host?: string): Promise<{ status: number; body: string }> {
  const u = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, headers: host ? { host } : {} }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('memlens view: the server', () => {
  let dir = '';
  let view: RunningView;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-view-'));
    // A verl-style run directory: <save_path>/step<N>/torch_memory_rank<R>_pid<P>.pickle
    for (const [step, rank] of [
      [2, 1],
      [2, 0],
      [10, 0],
    ] as const) {
      mkdirSync(join(dir, 'run', `step${step}`), { recursive: true });
      writeFileSync(join(dir, 'run', `step${step}`, `torch_memory_rank${rank}_pid${100 + rank}.pickle`), 'x');
    }
    writeFileSync(join(dir, 'run', 'notes.txt'), 'not a snapshot');
    writeFileSync(join(dir, 'secret.txt'), 'do not serve');
    view = await startView(EXAMPLE, join(dir, 'run'));
  });
  afterAll(() => view?.stop());

  it('lists the named file and every snapshot of the run directory, ordered by step and rank', async () => {
    const r = await get(view.origin, '/api/files');
    const files = (JSON.parse(r.body) as { files: { name: string; label: string }[] }).files;
    expect(files.map((f) => f.label)).toEqual(['', 'step 2 · rank 0', 'step 2 · rank 1', 'step 10 · rank 0']);
    expect(files[0]!.name).toBe(EXAMPLE);
    expect(files.some((f) => f.name.endsWith('notes.txt'))).toBe(false);
  });

  it('serves the files by index with their exact bytes, and the app', async () => {
    const f = await get(view.origin, '/files/1');
    expect(f.status).toBe(200);
    expect(f.body).toBe('x');
    const app = await get(view.origin, '/');
    expect(app.status).toBe(200);
    expect(app.body).toContain('<div id="root">');
    expect((await get(view.origin, '/files/4')).status).toBe(404);
  });

  it('serves nothing else: no path traversal, no other host names', async () => {
    for (const path of [
      '/../package.json',
      '/%2e%2e/%2e%2e/package.json',
      '/..%2f..%2fpackage.json',
      `/${dir}/secret.txt`,
      '/files/../../package.json',
    ]) {
      expect((await get(view.origin, path)).status, path).toBe(404);
    }
    expect((await get(view.origin, '/api/files', 'evil.example:80')).status).toBe(403);
  });

  it('a missing path or an empty directory is bad input: one line, exit 2, no server', () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty, { recursive: true });
    for (const [path, why] of [
      [join(dir, 'nope.pickle'), /no such file/],
      [empty, /no snapshot files/],
    ] as const) {
      const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'view', path], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.startsWith(`memlens: ${path}: `)).toBe(true);
      expect(lines[0]).toMatch(why);
    }
  });
});
