import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { pickleDumps } from '../../src/engine/encode/pickle-writer.js';
import { deepStackValue } from '../helpers/deep-stacks.js';
import { impossibleCases } from '../helpers/impossible.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The web app's hard edges in headless Chromium: a query the engine fails reaches the page as one
 * visible line (not "computing…" forever); an impossible file's violations show in the Overview;
 * the minimap's scheduled redraw survives leaving its tab; the file list after a file opened from
 * disk. Screenshots go to /tmp/shots/hard-edges/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const SHOTS = '/tmp/shots/hard-edges';
const ready = existsSync(CHROMIUM) && existsSync(APP);

describe.skipIf(!ready && process.env.CI === undefined)('web app: hard edges', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const impossible = impossibleCases().find((c) => c.name === 'negative-segment-size')!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-hard-edges-'));
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(join(dir, 'run.pickle'), generateSnapshotBytes({ events: 4000, seed: 21 }).bytes);
    writeFileSync(join(dir, 'other.pickle'), generateSnapshotBytes({ events: 2000, seed: 22 }).bytes);
    writeFileSync(join(dir, 'impossible.pickle'), pickleDumps(impossible.value));
    writeFileSync(join(dir, 'local.pickle'), generateSnapshotBytes({ events: 1000, seed: 23 }).bytes);
    writeFileSync(join(dir, 'deep.pickle'), pickleDumps(deepStackValue(20_000)));
    view = await startView(
      join(dir, 'run.pickle'),
      join(dir, 'other.pickle'),
      join(dir, 'impossible.pickle'),
      join(dir, 'deep.pickle'),
    );
    ({ browser, page } = await openBrowser());
    page.on('pageerror', (e) => errors.push(e.message));
  });
  afterAll(async () => {
    await browser?.close();
    await view?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (file: string, extra = '') => {
    await page.goto('about:blank');
    await page.goto(`${view.url}#file=${encodeURIComponent(join(dir, file))}${extra}`);
    await page.waitForSelector('.load-done', { timeout: 30_000 });
  };

  it('a served file gone since it was listed: its load says so in one line (HTTP 404)', async () => {
    const gone = join(dir, 'gone.pickle');
    writeFileSync(gone, generateSnapshotBytes({ events: 500, seed: 24 }).bytes);
    const served = await startView(gone);
    try {
      rmSync(gone);
      await page.goto('about:blank');
      await page.goto(served.url);
      const alert = page.getByRole('alert');
      await alert.waitFor({ timeout: 30_000 });
      expect(await alert.textContent()).toBe(`${gone}: cannot read (HTTP 404)`);
    } finally {
      await served.stop();
    }
  });

  it('a query the engine fails shows as one line on the page', async () => {
    await open('run.pickle', '&tab=flame');
    await page.waitForSelector('canvas', { timeout: 30_000 });
    // A query no view handles the failure of, as the flame page's was when a deep stack overflowed.
    await page.evaluate(() => {
      const engine = (
        globalThis as unknown as { memlensEngine: { query(q: string, a: unknown): Promise<unknown> } }
      ).memlensEngine;
      void engine.query('flame', { device: 7, entry: null, fullStacks: false });
    });
    const alert = page.locator('.worker-failure');
    await alert.waitFor({ timeout: 10_000 });
    const text = (await alert.textContent()) ?? '';
    expect(text).toMatch(/^The engine could not answer \(flame\): .*device 7/);
    expect(text).not.toContain('\n');
    expect(await alert.isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'worker-error.png') });
  });

  it('the flame graph of stacks 20,000 frames deep is drawn, with no error', async () => {
    errors.length = 0;
    await open('deep.pickle', '&tab=flame');
    await page.waitForSelector('text=all live memory', { timeout: 30_000 });
    await page.waitForSelector('canvas', { timeout: 30_000 });
    expect(await page.locator('.worker-failure').count()).toBe(0);
    expect(await page.locator('text=computing…').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'flame-deep.png') });
  });

  it("the Overview names an impossible file's violations", async () => {
    await open('impossible.pickle', '&tab=overview');
    const warning = page.locator('ul.warnings li', { hasText: 'impossible in this file' }).first();
    await warning.waitFor({ timeout: 10_000 });
    expect(await warning.textContent()).toContain(impossible.first);
    const body = (await page.locator('table.summary').first().textContent()) ?? '';
    expect(body).not.toMatch(/-\d[\d.,]*\s?(B|KiB|MiB|GiB)\b/);
    await page.screenshot({ path: join(SHOTS, 'overview-impossible.png'), fullPage: true });
  });

  it('leaving the timeline with a minimap redraw scheduled throws nothing', async () => {
    await open('run.pickle', '&tab=timeline');
    await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
    await page.waitForSelector('.minimap-brush', { timeout: 10_000 });
    errors.length = 0;
    for (let i = 0; i < 5; i++) {
      // In one task: a zoom schedules the minimap's redraw for the next frame, then the tab is left.
      // (A string: this file is type-checked without the DOM library.)
      await page.evaluate(`(() => {
        const target = document.querySelector('canvas.plot-target');
        const r = target.getBoundingClientRect();
        target.dispatchEvent(new WheelEvent('wheel', {
          deltaY: -200, clientX: r.left + r.width / 2, clientY: r.top + 20, bubbles: true, cancelable: true,
        }));
        [...document.querySelectorAll('[role="tab"]')].find((t) => t.textContent === 'Overview').click();
      })()`);
      await page.waitForTimeout(200);
      expect(errors).toEqual([]);
      await page.getByRole('tab', { name: 'Timeline & pool state' }).click();
      await page.waitForSelector('.minimap-brush', { timeout: 10_000 });
    }
    expect(errors).toEqual([]);
  });

  it('after a file opened from disk, the served file can be chosen again', async () => {
    await open('run.pickle', '&tab=overview');
    const select = page.getByLabel('file', { exact: true });
    await page.getByLabel('open a snapshot file').setInputFiles(join(dir, 'local.pickle'));
    await page.waitForSelector('.load-done:has-text("local.pickle")', { timeout: 30_000 });
    // The list shows what is open, not the served file from before.
    const shown = await select.evaluate((s) => {
      const list = s as unknown as { options: { textContent: string | null }[]; selectedIndex: number };
      return list.options[list.selectedIndex]?.textContent ?? '';
    });
    expect(shown).toContain('local.pickle');
    await select.selectOption(join(dir, 'run.pickle'));
    await page.waitForSelector(`.load-done:has-text("${join(dir, 'run.pickle')}")`, { timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'file-bar-after-local.png') });
  });
});
