import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { PLANTED_RUN, writeGeneratedRun } from '../helpers/generated-run.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The README's pictures, taken by headless Chromium from the same generated scenarios every time
 * (fixed seeds, fixed paths), so they are redrawn whenever the UI changes: the Diagnosis view of
 * an OOM snapshot and the Run page of a run of ranks × steps. Each test first checks the page
 * shows what the README says it shows, then writes docs/img/<name>.png, 1280 px wide.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const IMG = join(ROOT, 'docs', 'img');
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html'));
const WIDTH = 1280;
// A fixed directory, not mkdtemp: the paths the pages print stay the same from run to run.
const WORK = join(tmpdir(), 'memlens-docs-screenshots');

describe.skipIf(!ready && process.env.CI === undefined)('README screenshots', () => {
  const oomFile = join(WORK, 'train-oom.pickle');
  const runRoot = join(WORK, 'run');
  let fileView: RunningView;
  let runView: RunningView;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    rmSync(WORK, { recursive: true, force: true });
    mkdirSync(runRoot, { recursive: true });
    mkdirSync(IMG, { recursive: true });
    process.env.XDG_CACHE_HOME = join(WORK, 'cache');
    writeFileSync(
      oomFile,
      generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes,
    );
    writeGeneratedRun(runRoot, PLANTED_RUN);
    // Two servers, as a user opens them: `memlens view FILE` and `memlens view DIR`.
    fileView = await startView(oomFile);
    runView = await startView(runRoot);
    ({ browser, page } = await openBrowser());
    await page.setViewportSize({ width: WIDTH, height: 860 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await fileView?.stop();
    await runView?.stop();
    rmSync(WORK, { recursive: true, force: true });
  });

  it('docs/img/diagnosis.png: the Diagnosis view leads with the OOM card, its cause and its command', async () => {
    await page.goto(`${fileView.url}#file=${encodeURIComponent(oomFile)}`);
    await page.waitForSelector('main.diagnosis article.finding', { timeout: 30_000 });
    const lead = page.locator('article.finding').first();
    expect(await lead.getAttribute('class')).toBe('finding oom lead');
    expect(await lead.locator('.headline').textContent()).toMatch(
      /^Out of memory at entry [\d,]+ .* fragmentation/,
    );
    expect(await lead.locator('code').textContent()).toBe('memlens oom train-oom.pickle');
    // The README also says it names what held memory at the peak.
    expect(await page.locator('article.finding.peak').count()).toBe(1);
    // The load time varies from run to run: hidden, so an unchanged UI gives the same picture.
    await page.screenshot({ path: join(IMG, 'diagnosis.png'), style: '.load-done { visibility: hidden; }' });
  });

  it('docs/img/run.png: the Run page shows the ranks × steps heatmap and names the outliers', async () => {
    await page.goto(runView.url);
    await page.waitForSelector('.heatmap .hm-cell', { timeout: 60_000 });
    // Every cell is in: 4 ranks × 6 steps, and the OOM dump as a cell of its own.
    await expect
      .poll(() => page.locator('.heatmap .hm-cell').count(), { timeout: 60_000 })
      .toBeGreaterThanOrEqual(4 * 6);
    await expect
      .poll(async () => (await page.locator('.run-findings').textContent()) ?? '', { timeout: 60_000 })
      .toMatch(/rank 3 OOM after step 6/);
    const text = (await page.locator('.run-findings').textContent()) ?? '';
    expect(text).toMatch(/rank 1, steps 3–6: allocated at the dump .*above the median rank/);
    expect(text).toMatch(/grows .* per step: rank 2/);
    // The page ends below the chart: no empty half-screen under it.
    await page.setViewportSize({ width: WIDTH, height: 680 });
    await page.screenshot({ path: join(IMG, 'run.png') });
  });
});
