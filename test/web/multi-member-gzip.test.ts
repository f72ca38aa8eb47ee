import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { CHROMIUM, CLI, openBrowser, startView } from '../helpers/view-server.js';

/**
 * A gzip file of several members (`cat a.gz b.gz`, bgzip's blocks, zero padding after them) reads
 * in the web app as the CLI reads it: dropped on the page, served by `memlens view`, and inside a
 * report page (which carries a .gz as it is). The browser's DecompressionStream alone refuses
 * everything after the first member.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

const bytes = Buffer.from(generateSnapshotBytes({ events: 20_000, seed: 43 }).bytes);

/** The bytes gzipped as members of `size` input bytes each, one after another. */
function members(size: number): Buffer {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(gzipSync(bytes.subarray(at, at + size)));
  return Buffer.concat(out);
}

const FILES: Record<string, Buffer> = {
  // cat a.gz b.gz
  'two.pickle.gz': members(Math.ceil(bytes.length / 2)),
  // bgzip's blocks are 64 KiB of input each
  'blocks.pickle.gz': members(65_280),
  // Zero bytes after the last member are padding (Node's zlib, and so the CLI, ignores them).
  'padded.pickle.gz': Buffer.concat([members(Math.ceil(bytes.length / 3)), Buffer.alloc(512)]),
};

interface DeviceJson {
  device: number;
}

function cli(...args: string[]) {
  return spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { cwd: dir, encoding: 'utf8' });
}

/** The devices of `summary --json` of a file, as the CLI reads it. */
function cliDevices(file: string): DeviceJson[] {
  const r = cli('summary', file, '--json');
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout).files[0].devices;
}

let dir = '';

describe.skipIf(!ready && process.env.CI === undefined)(
  'a gzip file of several members in the web app',
  () => {
    let browser: Browser;
    let page: Page;
    let plain: DeviceJson[];

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'memlens-web-members-'));
      writeFileSync(join(dir, 'plain.pickle'), bytes);
      for (const [name, gz] of Object.entries(FILES)) writeFileSync(join(dir, name), gz);
      plain = cliDevices('plain.pickle');
      ({ browser, page } = await openBrowser());
    });

    afterAll(async () => {
      await browser?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The summary's devices the page's engine holds once it has loaded its snapshot (or the error). */
    async function pageDevices(p: Page, name: string): Promise<DeviceJson[] | string> {
      const alert = p.getByRole('alert');
      await p.waitForSelector(`.load-done:has-text("${name}"), [role="alert"]`, { timeout: 60_000 });
      if ((await alert.count()) > 0) return (await alert.textContent()) ?? '';
      return (await p.evaluate(
        `globalThis.memlensEngine.query('summary', {}).then((s) => s.devices)`,
      )) as DeviceJson[];
    }

    it('the CLI reads every member (the figures of the file ungzipped)', () => {
      for (const name of Object.keys(FILES)) expect(cliDevices(name), name).toEqual(plain);
    });

    it('dropped on the page', async () => {
      await page.goto(pathToFileURL(APP).href);
      await page.waitForFunction('globalThis.memlensEngine !== undefined');
      for (const name of Object.keys(FILES)) {
        await page.getByLabel('open a snapshot file').setInputFiles(join(dir, name));
        expect(await pageDevices(page, name), name).toEqual(plain);
      }
    });

    it('what follows a member and is not one is refused, in the CLI and on the page alike', async () => {
      const name = 'junk.pickle.gz';
      writeFileSync(join(dir, name), Buffer.concat([FILES['two.pickle.gz']!, Buffer.from('junk')]));
      const r = cli('summary', name);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/incorrect header check/);
      await page.getByLabel('open a snapshot file').setInputFiles(join(dir, name));
      expect(await pageDevices(page, name)).toBe(`${name}: bad gzip data: incorrect header check`);
    });

    it('served by memlens view', async () => {
      for (const name of Object.keys(FILES)) {
        const view = await startView(join(dir, name));
        try {
          const p = await browser.newPage();
          await p.goto(view.url);
          expect(await pageDevices(p, name), name).toEqual(plain);
          await p.close();
        } finally {
          await view.stop();
        }
      }
    });

    it('inside a report page', async () => {
      for (const name of Object.keys(FILES)) {
        const html = join(dir, `${name}.html`);
        const r = cli('report', name, '-o', html);
        expect(r.status, r.stderr).toBe(0);
        const p = await browser.newPage();
        await p.goto(pathToFileURL(html).href);
        expect(await pageDevices(p, name), name).toEqual(plain);
        await p.close();
      }
    });
  },
);
