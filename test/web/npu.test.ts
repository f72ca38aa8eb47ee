import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npuSnapshotBytes } from '../../scripts/synth/npu.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * A torch_npu file in the web app (headless Chromium): the device picker and the overview name
 * the device npu:N, and the diagnosis and overview speak the NPU's words, as the CLI does.
 */
const APP = join(import.meta.dirname, '..', '..', 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

describe.skipIf(!ready && process.env.CI === undefined)('a torch_npu file in the web app', () => {
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  let file = '';

  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), 'memlens-web-npu-')), 'oom_snapshot_7_20261128.pickle');
    writeFileSync(file, npuSnapshotBytes({ oom: 'cann', device: 1 }).bytes);
    view = await startView(file);
    ({ browser, page } = await openBrowser());
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  it('names the device npu:1 and says nothing of CUDA', async () => {
    await page.goto(`${view.url}#file=${encodeURIComponent(file)}`);
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 30_000 });
    expect(await page.getByLabel('device').locator('option').allTextContents()).toEqual(['npu:1']);
    const diagnosis = (await page.locator('main.diagnosis').textContent()) ?? '';
    expect(diagnosis).toMatch(/no oom entry in the trace's 53 entries; .*CANN leaves none/);
    await page.getByRole('tab', { name: 'Overview' }).click();
    await page.waitForSelector('main.overview', { timeout: 30_000 });
    const overview = (await page.locator('main.overview').textContent()) ?? '';
    expect(overview).toContain('memory_summary, npu:1');
    expect(overview).toContain('not written (torch_npu writes none)');
    for (const text of [diagnosis, overview]) expect(text).not.toMatch(/\bCUDA\b|cudaMalloc|\bGPU\b|cuda:\d/);
  });
});
