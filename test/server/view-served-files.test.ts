import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import type { Server } from 'node:http';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRun } from '../../scripts/synth/run.js';
import { POLL_MS } from '../../src/server/run-service.js';
import { startServer } from '../../src/server/serve.js';
import { collectFiles } from '../../src/server/snapshot-files.js';
import { type RunningView, startView } from '../helpers/view-server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `memlens view` serves the files it listed and nothing else: whatever is put at a listed path
 * later (a link to /etc/passwd, another file, a step folder swapped for a link) is refused, while
 * a file that only grew or shrank is served whole, as it is now.
 */
const work = mkdtempSync(join(tmpdir(), 'memlens-view-served-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function get(
  origin: string,
  path: string,
  method = 'GET',
): Promise<{ status: number; body: string; length?: string }> {
  const u = new URL(path, origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          body: Buffer.concat(parts).toString('utf8'),
          length: res.headers['content-length'],
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('memlens view serves only the files it listed', () => {
  const run = join(work, 'run');
  const other = join(work, 'other');
  const given = join(work, 'given-link.pickle');
  let server: Server;
  let origin = '';
  /** Index in the served list of each file, by name below `run` (or the given link). */
  let index: Map<string, number>;

  beforeAll(async () => {
    for (const step of ['step1', 'step2', 'step3', 'step4']) {
      mkdirSync(join(run, step), { recursive: true });
      writeFileSync(join(run, step, 'torch_memory_rank0_pid1.pickle'), `snapshot of ${step}`);
    }
    mkdirSync(other);
    writeFileSync(join(other, 'torch_memory_rank0_pid1.pickle'), 'another folder');
    writeFileSync(join(work, 'target.pickle'), 'reached through a link the user gave');
    symlinkSync(join(work, 'target.pickle'), given);
    const files = await collectFiles([run, given]);
    index = new Map(files.map((f, i) => [f.name, i]));
    const view = await startServer(files, work);
    server = view.server;
    origin = view.url;
  });
  afterAll(() => server?.close());

  const url = (name: string) => `/files/${index.get(name)}`;

  it('serves what was listed, a link given by the user included', async () => {
    expect(await get(origin, url(join('run', 'step1', 'torch_memory_rank0_pid1.pickle')))).toMatchObject({
      status: 200,
      body: 'snapshot of step1',
    });
    expect(await get(origin, url(given))).toMatchObject({
      status: 200,
      body: 'reached through a link the user gave',
    });
  });

  it('a snapshot replaced by a link to /etc/passwd is refused', async () => {
    const file = join(run, 'step1', 'torch_memory_rank0_pid1.pickle');
    rmSync(file);
    symlinkSync('/etc/passwd', file);
    const r = await get(origin, url(join('run', 'step1', 'torch_memory_rank0_pid1.pickle')));
    expect(r.status).toBe(409);
    expect(r.body).toMatch(/replaced since memlens view listed it/);
    expect(r.body).not.toContain('root:');
  });

  it('a snapshot replaced by another file is refused', async () => {
    const file = join(run, 'step2', 'torch_memory_rank0_pid1.pickle');
    writeFileSync(`${file}.new`, 'a different file');
    renameSync(`${file}.new`, file);
    const r = await get(origin, url(join('run', 'step2', 'torch_memory_rank0_pid1.pickle')));
    expect(r.status).toBe(409);
    expect(r.body).not.toContain('a different file');
  });

  it('a step folder swapped for a link to another folder is refused', async () => {
    renameSync(join(run, 'step3'), join(work, 'step3-moved'));
    symlinkSync(other, join(run, 'step3'));
    const r = await get(origin, url(join('run', 'step3', 'torch_memory_rank0_pid1.pickle')));
    expect(r.status).toBe(409);
    expect(r.body).not.toContain('another folder');
  });

  it('a file that grew or shrank is served whole as it is now, never cut at its listed size', async () => {
    const name = join('run', 'step4', 'torch_memory_rank0_pid1.pickle');
    const file = join(run, 'step4', 'torch_memory_rank0_pid1.pickle');
    appendFileSync(file, ' and more written after');
    expect(await get(origin, url(name))).toMatchObject({
      status: 200,
      body: 'snapshot of step4 and more written after',
    });
    expect(await get(origin, url(name), 'HEAD')).toMatchObject({ status: 200, length: '40' });
    truncateSync(file, 8);
    expect(await get(origin, url(name))).toMatchObject({ status: 200, body: 'snapshot', length: '8' });
  });

  it('a file that shrinks mid-download aborts the transfer at once, not leaving the client waiting', async () => {
    const big = join(work, 'big.pickle');
    writeFileSync(big, Buffer.alloc(32 << 20, 7));
    const files = await collectFiles([big]);
    const view = await startServer(files, work);
    try {
      const u = new URL('/files/0', view.url);
      const outcome = await new Promise<string>((resolve) => {
        const req = request({ host: u.hostname, port: u.port, path: u.pathname }, (res) => {
          let got = 0;
          res.pause();
          truncateSync(big, 1 << 20);
          res.on('data', (b: Buffer) => {
            got += b.length;
          });
          res.on('end', () => resolve(`ended after ${got} bytes`));
          res.on('aborted', () => resolve('aborted'));
          res.on('error', () => resolve('aborted'));
          setTimeout(() => res.resume(), 50);
        });
        req.on('error', () => resolve('aborted'));
        req.end();
        // Not left waiting for bytes that will never come (until a socket timeout ends it).
        setTimeout(() => resolve('left waiting'), 3000);
      });
      expect(outcome).toBe('aborted');
    } finally {
      view.server.close();
      view.server.closeAllConnections();
    }
  });
});

describe('memlens view DIR --watch: a rewrite is served anew, a link put in its place is not', () => {
  const root = join(work, 'watched');
  const files = generateRun({ ranks: 2, windows: 1, seed: 12 });
  const [first, second] = files.map((f) => join(root, ...f.path.split('/')));
  let view: RunningView;

  beforeAll(async () => {
    for (const [i, f] of files.entries()) {
      const at = [first, second][i]!;
      mkdirSync(dirname(at), { recursive: true });
      writeFileSync(at, f.bytes);
    }
    writeFileSync(join(work, 'outside.pickle'), files[1]!.bytes);
    view = await startView(root, '--watch');
  });
  afterAll(() => view?.stop());

  /** The URL of each file once the run lists both, by path below the run. */
  async function urls(): Promise<Map<string, string>> {
    for (;;) {
      const state = JSON.parse((await get(view.origin, '/api/run')).body) as {
        names: string[];
        urls: string[];
      };
      if (state.urls.length === 2) return new Map(state.names.map((n, i) => [n, `/${state.urls[i]}`]));
      await sleep(200);
    }
  }

  it('after the watcher took both changes', async () => {
    const before = await urls();
    const url = (file: string) => before.get(join('watched', relative(root, file)))!;
    expect((await get(view.origin, url(second!))).status).toBe(200);
    // Training writes a new version under a temporary name and renames it into place.
    const rewritten = Buffer.concat([Buffer.from(files[0]!.bytes)]);
    writeFileSync(`${first}.tmp`, rewritten);
    renameSync(`${first}.tmp`, first!);
    rmSync(second!);
    symlinkSync(join(work, 'outside.pickle'), second!);
    await sleep(3 * POLL_MS + 500);
    const r0 = await get(view.origin, url(first!));
    expect(r0.status).toBe(200);
    expect(r0.length).toBe(String(rewritten.length));
    const r1 = await get(view.origin, url(second!));
    expect(r1.status).toBe(409);
  }, 30_000);
});

describe('memlens view DIR names files from the folder given', () => {
  it('a step folder above the run labels and orders none of its files', async () => {
    const run = join(work, 'step3', 'run');
    for (const step of ['step10', 'step2']) {
      mkdirSync(join(run, step), { recursive: true });
      writeFileSync(join(run, step, 'torch_memory_rank0_pid1.pickle'), 'x');
    }
    const files = await collectFiles([run]);
    expect(files.map((f) => `${f.name} ${f.label}`)).toEqual([
      `${join('run', 'step2', 'torch_memory_rank0_pid1.pickle')} step 2 · rank 0`,
      `${join('run', 'step10', 'torch_memory_rank0_pid1.pickle')} step 10 · rank 0`,
    ]);
  });
});
