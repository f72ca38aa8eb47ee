import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/serve.js';
import { collectFiles } from '../../src/server/snapshot-files.js';
import { rng } from '../helpers/rng.js';

/**
 * The view server under load on loopback: 50 clients download the listed files while they are
 * grown, shrunk, swapped for links to a secret file and /etc/passwd, and put back. Every 200 is a
 * listed file's own bytes in full; nothing else is ever returned, and descriptors stay flat.
 */
const work = mkdtempSync(join(tmpdir(), 'memlens-view-load-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const FILES = 6;
const CLIENTS = 50;
const RUN_MS = 3000;
const KiB = 1024;
const MiB = 1024 * KiB;

/** File i holds only the byte FILL(i); the secret holds only 'S'. */
const fill = (i: number) => 65 + i;
const fileAt = (i: number) => join(work, `rank${i}.pickle`);
const secret = join(work, 'secret.txt');

interface Outcome {
  status: number;
  ok: boolean;
}

function download(origin: string, agent: Agent, i: number): Promise<Outcome> {
  const u = new URL(`/files/${i}`, origin);
  return new Promise((resolve) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('error', () => resolve({ status: -1, ok: true }));
      res.on('aborted', () => resolve({ status: -1, ok: true }));
      res.on('end', () => {
        const body = Buffer.concat(parts);
        if (res.statusCode !== 200)
          return resolve({ status: res.statusCode!, ok: !body.includes('S'.repeat(8)) });
        // A 200 is the whole of file i as it was: only its byte, as many as announced.
        const whole = body.length === Number(res.headers['content-length']);
        resolve({ status: 200, ok: whole && body.every((b) => b === fill(i)) });
      });
    });
    req.on('error', () => resolve({ status: -1, ok: true }));
    req.end();
  });
}

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length;
}

// A collection on demand, so what the server still holds after the load is measured, not garbage.
v8.setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/**
 * Bytes the process holds that the server could leak: the JS heap and Buffers' memory, after the
 * sockets' close callbacks have run and two collections (the first frees what the second's finalizers release).
 */
async function heldBytes(): Promise<number> {
  await new Promise((r) => setTimeout(r, 100));
  collect();
  collect();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe.skipIf(process.platform !== 'linux')('the view server under load while its files change', () => {
  it(`${CLIENTS} clients for ${RUN_MS / 1000} s: only listed bytes, whole; descriptors and memory flat`, async () => {
    for (let i = 0; i < FILES; i++) writeFileSync(fileAt(i), Buffer.alloc(256 * KiB, fill(i)));
    writeFileSync(secret, Buffer.alloc(256 * KiB, 'S'));
    const files = await collectFiles(Array.from({ length: FILES }, (_, i) => fileAt(i)));
    const { server, url } = await startServer(files, work);
    const before = openDescriptors();
    const heldBefore = await heldBytes();
    const end = Date.now() + RUN_MS;
    const next = rng(22);
    const outcomes: Outcome[] = [];
    const mutate = async () => {
      while (Date.now() < end) {
        const i = next(FILES);
        const file = fileAt(i);
        switch (next(3)) {
          case 0:
            appendFileSync(file, Buffer.alloc(next(64) * KiB, fill(i)));
            break;
          case 1:
            // Shrunk only: truncating to more would fill the file with zeros.
            truncateSync(file, Math.min(statSync(file).size, next(256) * KiB));
            break;
          default: {
            // Moved away, a link in its place for a while, then moved back: the listed file again.
            renameSync(file, `${file}.away`);
            symlinkSync(next(2) === 0 ? secret : '/etc/passwd', file);
            await new Promise((r) => setTimeout(r, next(20)));
            rmSync(file);
            renameSync(`${file}.away`, file);
          }
        }
        await new Promise((r) => setTimeout(r, next(10)));
      }
    };
    const client = async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (Date.now() < end) outcomes.push(await download(url, agent, next(FILES)));
      agent.destroy();
    };
    await Promise.all([mutate(), ...Array.from({ length: CLIENTS }, client)]);
    await new Promise((r) => setTimeout(r, 200));
    const statuses = new Map<number, number>();
    for (const o of outcomes) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
    expect(statuses.get(409) ?? 0).toBeGreaterThan(0);
    expect(
      [...statuses.keys()].every((s) => [200, 409, 404, -1].includes(s)),
      JSON.stringify([...statuses]),
    ).toBe(true);
    expect(openDescriptors()).toBeLessThanOrEqual(before + 2);
    // ~700 downloads of up to 256 KiB went through: a server that kept what it sent would hold 100+ MiB.
    const held = (await heldBytes()) - heldBefore;
    expect(held).toBeLessThan(16 * MiB);
    server.close();
    server.closeAllConnections();
  }, 30_000);
});
