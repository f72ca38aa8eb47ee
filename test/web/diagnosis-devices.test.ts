import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { CHROMIUM, CLI, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * A file of three devices whose OOM is on device 2, in headless Chromium, served and as a
 * `memlens report` page: both land on device 2's OOM, the device picker says which devices have
 * findings, and the clean devices say so beneath it. An OOM the file alone cannot judge shows its
 * two readings side by side with the capacity field that decides. Screenshots in /tmp/shots/devices/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/devices';
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

describe.skipIf(!ready && process.env.CI === undefined)('the Diagnosis of a file of several devices', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const three = () => join(dir, 'three.pickle');
  const outside = () => join(dir, 'outside.pickle');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-web-devices-'));
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(
      three(),
      generateSnapshotBytes({
        events: 4000,
        seed: 7,
        devices: 3,
        devicePlants: { 2: { oomCause: 'fragmentation' } },
      }).bytes,
    );
    writeFileSync(outside(), generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'outside' }).bytes);
    view = await startView(three(), outside());
    ({ browser, page } = await openBrowser());
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  const hash = () => new URLSearchParams(new URL(page.url()).hash.slice(1));

  /** The landing: device 2, its OOM leading, the clean devices named beneath, the picker marked. */
  const expectLandedOnDevice2 = async (shot: string) => {
    await page.waitForSelector('main.diagnosis[aria-busy="false"] article.finding.lead', { timeout: 60_000 });
    expect(await page.locator('main.diagnosis h1').textContent()).toBe(
      'What happened to the memory of cuda:2',
    );
    expect(await page.locator('article.finding').first().getAttribute('class')).toBe('finding oom lead');
    expect(await page.locator('article.finding.lead .headline').textContent()).toMatch(
      /^Out of memory at entry [\d,]+ \(a [\d.]+ [GM]iB request\) — fragmentation: /,
    );
    expect(await page.locator('article.finding.lead .stake').textContent()).toMatch(/ at stake, /);
    const others = page.getByRole('region', { name: 'other devices' });
    // In the order of their worst finding (here their peaks'): both clean.
    expect((await others.locator('li').allTextContents()).sort()).toEqual([
      'cuda:0: nothing found',
      'cuda:1: nothing found',
    ]);
    const options = await page.getByRole('combobox', { name: 'device' }).locator('option').allTextContents();
    expect(options[2]).toMatch(/^cuda:2 — \d problems?$/);
    expect(options.slice(0, 2)).toEqual(['cuda:0 — nothing found', 'cuda:1 — nothing found']);
    await page.screenshot({ path: join(SHOTS, `${shot}.png`), fullPage: true });
  };

  it('served: lands on device 2, the device of the worst finding', async () => {
    await page.goto(`${view.url}#file=${encodeURIComponent(three())}`);
    await expectLandedOnDevice2('served');
    expect(hash().get('device')).toBe('2');
    // Another device is one click away, and says it found nothing.
    await page.getByRole('region', { name: 'other devices' }).getByRole('button', { name: 'cuda:0' }).click();
    await expect
      .poll(() => page.locator('main.diagnosis h1').textContent())
      .toBe('What happened to the memory of cuda:0');
    expect(await page.locator('.checked.clean h2').textContent()).toBe('✓ No problem found on cuda:0');
    expect(
      await page.getByRole('region', { name: 'other devices' }).locator('li').first().textContent(),
    ).toMatch(/^cuda:2: \d problems? — Out of memory/);
    await page.screenshot({ path: join(SHOTS, 'served-device-0.png'), fullPage: true });
  });

  it('while analyses are pending, a device without a finding yet says "nothing found yet", never "nothing found"', async () => {
    // Large enough that leaks, GC bursts and fragmentation are still running when the OOM lands
    // the page on device 2, so the pending state is on screen.
    const big = join(dir, 'three-big.pickle');
    writeFileSync(
      big,
      generateSnapshotBytes({
        events: 120_000,
        seed: 7,
        devices: 3,
        devicePlants: { 2: { oomCause: 'fragmentation' } },
      }).bytes,
    );
    const served = await startView(big);
    const local = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Every wording shown: the picker's options, and the other-devices list with the busy flag of
    // the Diagnosis it belongs to (both rendered from the same answer).
    await local.addInitScript(`
      const seen = { picker: [], others: [] };
      globalThis.deviceWords = seen;
      const add = (list, line) => { if (list.at(-1) !== line) list.push(line); };
      new MutationObserver(() => {
        const busy = document.querySelector('main.diagnosis')?.getAttribute('aria-busy') === 'true';
        for (const o of document.querySelectorAll('select[aria-label="device"] option'))
          if (o.textContent.startsWith('cuda:0 —')) add(seen.picker, o.textContent);
        for (const li of document.querySelectorAll('.other-devices li'))
          add(seen.others, (busy ? 'busy ' : 'done ') + li.textContent);
      }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    `);
    try {
      await local.goto(served.url);
      await local.waitForSelector('main.diagnosis[aria-busy="false"] article.finding.lead', {
        timeout: 60_000,
      });
      const seen = (await local.evaluate('globalThis.deviceWords')) as { picker: string[]; others: string[] };
      expect(seen.others.filter((l) => l.startsWith('busy ') && /nothing found$/.test(l))).toEqual([]);
      expect(seen.others).toContain('busy cuda:0: nothing found yet');
      // The first answer comes with leaks, GC bursts and fragmentation still pending: "yet" until
      // they answer (on this file they then find fragmentation on cuda:0 too).
      expect(seen.picker[0]).toBe('cuda:0 — nothing found yet');
      expect(seen.picker.at(-1)).not.toMatch(/yet$/);
      expect(seen.others.at(-1)).toMatch(/^done cuda:[01]: /);
    } finally {
      await local.close();
      await served.stop();
    }
  }, 120_000);

  it('report.html: lands on device 2 too', async () => {
    const out = join(dir, 'three.html');
    const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'report', three(), '-o', out], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    await page.goto(pathToFileURL(out).href);
    await expectLandedOnDevice2('report');
  });

  it('an undetermined OOM: both readings side by side, and the capacity field decides', async () => {
    await page.goto('about:blank');
    await page.goto(`${view.url}#file=${encodeURIComponent(outside())}`);
    await page.waitForSelector('main.diagnosis[aria-busy="false"] article.finding.lead', { timeout: 60_000 });
    const block = page.getByRole('region', { name: 'two readings' });
    const readings = block.locator('.reading');
    expect(await readings.count()).toBe(2);
    const [a, b] = [await readings.nth(0).boundingBox(), await readings.nth(1).boundingBox()];
    // Side by side: one row, the second to the right of the first.
    expect(Math.abs(a!.y - b!.y)).toBeLessThan(2);
    expect(b!.x).toBeGreaterThan(a!.x + a!.width - 1);
    expect(await readings.nth(0).locator('.verdict').textContent()).toBe('outside PyTorch');
    await page.screenshot({ path: join(SHOTS, 'undetermined.png'), fullPage: true });
    await block.getByRole('textbox', { name: 'capacity' }).fill('80 GiB');
    await block.getByRole('button', { name: 'decide' }).click();
    await expect
      .poll(() => page.locator('article.finding.lead .headline').textContent(), { timeout: 30_000 })
      .toMatch(/— memory outside PyTorch: /);
    expect(await page.getByRole('region', { name: 'two readings' }).count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'undetermined-decided.png'), fullPage: true });
  });
});
