import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The first picture: the worker sends a timeline's outline (from the running totals alone) ahead
 * of its stacked answer, and a gzipped file dropped on the page is ungzipped beside the engine
 * (its own worker) and reads as the file itself does. Screenshots in /tmp/shots/first-timeline/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/first-timeline';
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

interface Answer {
  runs: number;
  columns: number;
  yMax: number;
  active: number[];
  reserved: number[];
}

describe.skipIf(!ready && process.env.CI === undefined)('the first picture of a timeline', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const bytes = generateSnapshotBytes({ events: 20_000, seed: 43 }).bytes;
  const entries = loadSnapshotBytes(bytes).devices[0]!.trace.length;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-web-first-timeline-'));
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(join(dir, 'loop.pickle'), bytes);
    writeFileSync(join(dir, 'loop.pickle.gz'), gzipSync(bytes));
    // Cut inside the deflate stream: no trailer, so it can only fail as it is inflated.
    const gz = gzipSync(bytes);
    writeFileSync(join(dir, 'cut.pickle.gz'), gz.subarray(0, gz.length >> 1));
    // 16 MiB that are no snapshot, incompressible: refused at its first bytes, long before its end.
    const noise = randomBytes(16 << 20);
    noise.write('not a snapshot');
    writeFileSync(join(dir, 'noise.bin.gz'), gzipSync(noise, { level: 1 }));
    view = await startView(join(dir, 'loop.pickle'));
    ({ browser, page } = await openBrowser());
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  it('the worker answers a first timeline query with its outline first: same columns, top and lines, nothing stacked', async () => {
    await page.goto(`${view.url}#tab=timeline`);
    await page.waitForSelector('canvas[data-ready="true"]', { timeout: 60_000 });
    await page.screenshot({ path: join(SHOTS, 'stacked.png') });
    const { partials, answer } = (await page.evaluate(`(async () => {
      const partials = [];
      const pick = (l) => ({ runs: l.runs, columns: l.columns, yMax: l.yMax, active: [...l.active], reserved: [...l.reserved] });
      const answer = await globalThis.memlensEngine.query(
        'timeline',
        {
          device: 0,
          request: { axis: 'entry', x0: 0, x1: ${entries}, columns: 400, rows: 300 },
          paint: { width: 400, height: 300, dpr: 1 },
          outline: true,
        },
        undefined,
        (p) => partials.push({ ...pick(p), bitmap: p.bitmap instanceof ImageBitmap }),
      );
      return { partials, answer: pick(answer) };
    })()`)) as { partials: (Answer & { bitmap: boolean })[]; answer: Answer };
    expect(partials.length).toBe(1);
    const [outline] = partials;
    expect(outline!.bitmap).toBe(true);
    expect(outline!.runs).toBe(0);
    expect(answer.runs).toBeGreaterThan(0);
    const shape = ({ columns, yMax, active, reserved }: Answer) => ({ columns, yMax, active, reserved });
    expect(shape(outline!)).toEqual(shape(answer));
  });

  it('a later query (a pan or zoom: a layer is on show), or one of the pools or segments stack, sends no outline', async () => {
    const partials = (await page.evaluate(`(async () => {
      const asked = [{}, { stack: 'pools', outline: true }, { stack: 'segments', outline: true }];
      const counts = [];
      for (const extra of asked) {
        let n = 0;
        await globalThis.memlensEngine.query(
          'timeline',
          { device: 0, request: { axis: 'entry', x0: 0, x1: 100, columns: 50, rows: 50 }, paint: { width: 50, height: 50, dpr: 1 }, ...extra },
          undefined,
          () => n++,
        );
        counts.push(n);
      }
      return counts;
    })()`)) as number[];
    expect(partials).toEqual([0, 0, 0]);
  });

  it('a dropped .gz reads as its file does (ungzipped in a worker of its own); a cut one says so in one line', async () => {
    const local = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const errors: string[] = [];
    local.on('pageerror', (e) => errors.push(e.message));
    const workers: string[] = [];
    let closed = 0;
    local.on('worker', (w) => {
      workers.push(w.url());
      w.on('close', () => closed++);
    });
    await local.goto(`file://${APP}`);
    await local.waitForFunction('globalThis.memlensEngine !== undefined');
    expect(workers.length).toBe(1);
    await local.getByLabel('open a snapshot file').setInputFiles(join(dir, 'loop.pickle.gz'));
    await local.getByRole('tab', { name: /Timeline/ }).click();
    await local.waitForSelector('canvas[data-ready="true"]', { timeout: 60_000 });
    const done = local.locator('.load-done');
    expect(await done.textContent()).toMatch(/^loop\.pickle\.gz: /);
    expect(Number(await done.getAttribute('data-scanned-entries'))).toBeGreaterThan(entries / 2);
    // The engine's worker, and the inflater it started for the file.
    expect(workers.length).toBe(2);
    await local.screenshot({ path: join(SHOTS, 'dropped-gz.png') });
    await local.getByLabel('open a snapshot file').setInputFiles(join(dir, 'cut.pickle.gz'));
    const alert = local.getByRole('alert');
    await expect.poll(() => alert.textContent(), { timeout: 30_000 }).toMatch(/^cut\.pickle\.gz: .*gzip/);
    expect((await alert.textContent())!.split('\n').length).toBe(1);
    // A file refused at its start stops its inflater (two so far: the .gz's and the cut one's).
    await local.getByLabel('open a snapshot file').setInputFiles(join(dir, 'noise.bin.gz'));
    await expect
      .poll(() => alert.textContent(), { timeout: 30_000 })
      .toMatch(/^noise\.bin\.gz: not a pickle/);
    expect(workers.length).toBe(4);
    await expect.poll(() => closed, { timeout: 10_000 }).toBe(3);
    expect(errors).toEqual([]);
    await local.close();
  });

  it('until the selected entry is answered, the pool state says it is reading, never "before the first entry"', async () => {
    const local = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    // Every line the entry line ever shows, from the first render on.
    await local.addInitScript(`
      const seen = [];
      globalThis.entryLines = seen;
      new MutationObserver(() => {
        const line = document.querySelector('.pool .event')?.textContent;
        if (line && seen.at(-1) !== line) seen.push(line);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    `);
    await local.goto(`${view.url}#tab=timeline`);
    await local.waitForSelector('canvas[data-ready="true"]', { timeout: 60_000 });
    await expect.poll(() => local.locator('.pool .event').textContent()).toMatch(/allocated .* reserved/);
    const lines = (await local.evaluate('globalThis.entryLines')) as string[];
    expect(lines[0]).toMatch(/^reading this entry's state/);
    expect(lines).not.toContain('before the first entry');
    await local.close();
  });
});
