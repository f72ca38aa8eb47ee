import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { diagnose } from '../../src/engine/analyses/diagnosis/diagnosis.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The first answer first, in headless Chromium: with the leak analysis held back (the worker's
 * test pace), the OOM shows at once, leading, under a line naming what is still being looked at;
 * the leak joins below it when its analysis answers, and the line goes. Screenshots of both
 * moments in /tmp/shots/first-answer/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/first-answer';
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);
const MiB = 1024 * 1024;

describe.skipIf(!ready && process.env.CI === undefined)(
  'the Diagnosis shows each finding as it is known',
  () => {
    let dir = '';
    let view: RunningView;
    let browser: Browser;
    let page: Page;
    const bytes = generateSnapshotBytes({
      events: 20_000,
      seed: 41,
      leakBytes: 3 * MiB,
      oomCause: 'exhaustion',
    }).bytes;
    const file = () => join(dir, 'oom-and-leak.pickle');

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'memlens-web-first-'));
      mkdirSync(SHOTS, { recursive: true });
      writeFileSync(file(), bytes);
      // Two files served: the page opens neither until the link names one.
      writeFileSync(join(dir, 'other.pickle'), generateSnapshotBytes({ events: 2000, seed: 2 }).bytes);
      view = await startView(file(), join(dir, 'other.pickle'));
      ({ browser, page } = await openBrowser());
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    afterAll(async () => {
      await browser?.close();
      await view?.stop();
    });

    it('the OOM leads while leaks, GC bursts and fragmentation are looked at; the line goes when all are in', async () => {
      await page.goto(view.url);
      await page.waitForFunction('globalThis.memlensEngine !== undefined');
      // Each step waits 1.5 s while the leaks are still to come: the page must show what it has.
      await page.evaluate("globalThis.memlensEngine.query('diagnosisPace', { pending: 'leaks', ms: 1500 })");
      await page.evaluate(`location.hash = ${JSON.stringify(`#file=${encodeURIComponent(file())}`)}`);

      await page.waitForSelector('main.diagnosis[aria-busy="true"] article.finding.oom.lead', {
        timeout: 30_000,
      });
      expect(await page.locator('.still-looking').textContent()).toMatch(
        /^still looking at: (.+, )?leaks, GC bursts, fragmentation…$/,
      );
      expect(await page.locator('article.finding.leak').count()).toBe(0);
      await page.screenshot({ path: join(SHOTS, 'mid-way.png'), fullPage: true });

      await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
      expect(await page.locator('.still-looking').count()).toBe(0);
      const s = loadSnapshotBytes(bytes);
      const expected = diagnose(s, s.devices[0]!, { file: 'oom-and-leak.pickle' }).findings;
      expect(expected.map((f) => f.kind)).toContain('leak');
      expect(await page.locator('article.finding .headline').allTextContents()).toEqual(
        expected.filter((f) => f.kind !== 'warning').map((f) => f.headline),
      );
      expect(await page.locator('article.finding').first().getAttribute('class')).toBe('finding oom lead');
      await page.screenshot({ path: join(SHOTS, 'all-in.png'), fullPage: true });
    });

    it('the worker starts the diagnosis when the file is in, before the page asks for it', async () => {
      await page.goto(view.url);
      await page.waitForFunction('globalThis.memlensEngine !== undefined');
      await page.evaluate("globalThis.memlensEngine.query('diagnosisPace', { pending: 'leaks', ms: 1500 })");
      // The page's own diagnosis query is held back until the test lets it go.
      await page.evaluate(`(() => {
        const post = Worker.prototype.postMessage;
        let held = [];
        globalThis.releaseDiagnosis = () => { for (const [w, a] of held) post.apply(w, a); held = null; };
        Worker.prototype.postMessage = function (...a) {
          if (held !== null && a[0]?.query === 'diagnosis') held.push([this, a]);
          else post.apply(this, a);
        };
      })()`);
      await page.evaluate(`location.hash = ${JSON.stringify(`#file=${encodeURIComponent(file())}`)}`);
      await page.waitForSelector('.load-done', { timeout: 30_000 });
      // Longer than a step: a diagnosis started with the load is past its OOMs and its peak by now.
      await page.waitForTimeout(2200);
      await page.evaluate('globalThis.releaseDiagnosis()');
      await page.waitForSelector('main.diagnosis[aria-busy="true"] article.finding.oom.lead', {
        timeout: 30_000,
      });
      const looking = await page.locator('.still-looking').textContent();
      expect(looking).toMatch(/leaks, GC bursts, fragmentation…$/);
      expect(looking).not.toContain('the peak');
      await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
    });
  },
);
