import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/** The Categories panel in headless Chromium names the rule behind each category (FlexGen's weights). */
const ROOT = join(import.meta.dirname, '..', '..');
const FILE = join(ROOT, '..', 'shared', 'corpus', 'Yiyi_LLM-inference__oom_snapshot__61261a2.pickle');
const SHOTS = '/tmp/shots/frames';
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html')) && existsSync(FILE);

describe.skipIf(!ready)('categories panel: rules by name', () => {
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    view = await startView(FILE);
    ({ browser, page } = await openBrowser());
  });
  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  it('the parameter row is labelled by weight-init, and the rules table lists it by name', async () => {
    await page.goto(`${view.url}#file=${encodeURIComponent(FILE)}&tab=analyses&panel=categories`);
    const panel = page.locator('section[aria-label="categories"]');
    const parameter = panel.locator('tr', { hasText: 'parameter' }).first();
    await expect
      .poll(() => parameter.locator('td.rule-ids').textContent(), { timeout: 30_000 })
      .toBe('weight-init');
    const rule = panel.locator('tr[data-rule="weight-init"]');
    expect(await rule.textContent()).toMatch(
      /weight-init.*parameter.*460.*allocated in a weight initialiser/,
    );
    await panel.screenshot({ path: join(SHOTS, 'categories-rules.png') });
  });
});
