import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRun, type RunFile } from '../../scripts/synth/run.js';
import { cellResult } from '../../src/engine/analyses/run/cell-result.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * `memlens view DIR --watch` while training writes new windows: a file written after the page
 * opened joins the Run page; a file still being written (growing between polls) or under a
 * temporary name is not read until complete.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html'));
const SHOTS = '/tmp/shots/h8';

function getJson<T>(origin: string, path: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, origin);
    const req = request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}` }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => {
        body += b.toString();
      });
      res.on('end', () => resolve(JSON.parse(body) as T));
    });
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!ready && process.env.CI === undefined)('memlens view DIR --watch', () => {
  const work = mkdtempSync(join(tmpdir(), 'memlens-view-watch-'));
  const root = join(work, 'run');
  const files = generateRun({ ranks: 2, windows: 4, seed: 3 });
  const at = (f: RunFile) => join(root, ...f.path.split('/'));
  const later = (step: number, rank: number) => files.find((f) => f.steps[0] === step && f.rank === rank)!;
  let view: RunningView;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    for (const f of files.filter((f) => f.steps[0] <= 2)) {
      mkdirSync(dirname(at(f)), { recursive: true });
      writeFileSync(at(f), f.bytes);
    }
    mkdirSync(SHOTS, { recursive: true });
    process.env.XDG_CACHE_HOME = join(work, 'cache');
    view = await startView(root, '--watch');
    ({ browser, page } = await openBrowser());
    await page.goto(view.url);
    await page.waitForSelector('.heatmap .hm-cell', { timeout: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  // (Attributes, not dataset: this file is type-checked without the DOM library.)
  const steps = () => page.$$eval('.hm-cell', (els) => els.map((e) => e.getAttribute('data-step')));

  it('shows a window written after the page opened, with its figures', async () => {
    expect(await page.locator('.run-page h1').textContent()).toContain('watching for new files');
    expect((await steps()).filter((s) => s === '3')).toHaveLength(0);
    // rank 0 the way writers do it safely: a temporary name, renamed when complete.
    const f0 = later(3, 0);
    mkdirSync(dirname(at(f0)), { recursive: true });
    writeFileSync(`${at(f0)}.tmp`, f0.bytes);
    // rank 1 written in place, a piece every 0.5 s: it grows across the server's polls.
    const f1 = later(3, 1);
    const third = Math.ceil(f1.bytes.length / 6);
    for (let i = 0; i < 6; i++) {
      appendFileSync(at(f1), f1.bytes.subarray(i * third, (i + 1) * third));
      await sleep(500);
      const listed = await getJson<{ files: { name: string }[] }>(view.origin, '/api/files');
      expect(listed.files.some((f) => f.name.endsWith('.tmp'))).toBe(false);
      if (i < 5) expect(listed.files.some((f) => f.name.endsWith(f1.path))).toBe(false);
    }
    renameSync(`${at(f0)}.tmp`, at(f0));
    const cell = (rank: number) => page.locator(`.hm-cell[data-step="3"][data-rank="${rank}"]`);
    await cell(0).waitFor({ timeout: 30_000 });
    await cell(1).waitFor({ timeout: 30_000 });
    for (const [rank, f] of [
      [0, f0],
      [1, f1],
    ] as const) {
      const expected = cellResult(loadSnapshotBytes(f.bytes)).devices[0]!.allocated_bytes;
      expect(Number(await cell(rank).getAttribute('data-value'))).toBe(expected);
    }
    // Nothing was read half-written: no snapshot of the run failed to decode.
    expect(await page.locator('.run-page .error').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'run-watch.png'), fullPage: true });
  }, 60_000);

  it('drops a window deleted from the directory', async () => {
    const cell = page.locator('.hm-cell[data-step="3"][data-rank="1"]');
    await cell.waitFor({ timeout: 30_000 });
    rmSync(at(later(3, 1)));
    await cell.waitFor({ state: 'detached', timeout: 30_000 });
    const s = await getJson<{ report: { snapshots: unknown[] } }>(view.origin, '/api/run');
    expect(s.report.snapshots).toHaveLength(files.filter((f) => f.steps[0] <= 3).length - 1);
  }, 60_000);

  it('polling holds no descriptor open, and SIGINT stops it with its poll timer released', async () => {
    const fds = () => readdirSync(`/proc/${view.child.pid}/fd`).length;
    const before = fds();
    await sleep(3 * 2000);
    expect(fds()).toBeLessThanOrEqual(before);
    const exited = new Promise<number | null>((r) => view.child.once('exit', (code) => r(code)));
    view.child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

describe.skipIf(!ready && process.env.CI === undefined)(
  'memlens view DIR on a run not decoded before',
  () => {
    it('serves the report of the files decoded so far while the rest decode', async () => {
      const work = mkdtempSync(join(tmpdir(), 'memlens-view-partial-'));
      const root = join(work, 'run');
      const files = generateRun({ ranks: 4, windows: 6, seed: 4 });
      for (const f of files) {
        const p = join(root, ...f.path.split('/'));
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, f.bytes);
      }
      process.env.XDG_CACHE_HOME = join(work, 'cache');
      const view = await startView(root);
      try {
        type State = { progress: unknown; report: { snapshots: unknown[] } | null };
        const seen: number[] = [];
        for (;;) {
          const s = await getJson<State>(view.origin, '/api/run');
          if (s.report !== null) seen.push(s.report.snapshots.length);
          if (s.progress === null && s.report !== null) break;
          await sleep(50);
        }
        expect(seen.at(-1)).toBe(files.length);
        expect(seen.some((n) => n > 0 && n < files.length)).toBe(true);
      } finally {
        await view.stop();
        rmSync(work, { recursive: true, force: true });
      }
    }, 120_000);
  },
);
