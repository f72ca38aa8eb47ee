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
 * The Diagnosis tab in headless Chromium: the app opens on it, shows the engine's findings (the
 * CLI's, computed in the worker) for an OOM, a leak, GC cycles and a clean loop, and each card's
 * link opens the view that proves it. Screenshots go to /tmp/shots/h5/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/h5';
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);
const MiB = 1024 * 1024;
const DUMP_ONLY = join(ROOT, '..', 'shared', 'corpus', 'ZijianDu_Attention__memory__e0517ea.pickle');

describe.skipIf(!ready && process.env.CI === undefined)('Diagnosis tab in headless Chromium', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const scenarios = {
    'oom.pickle': generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes,
    'leak.pickle': generateSnapshotBytes({ events: 20_000, seed: 41, leakBytes: 3 * MiB }).bytes,
    'cycles.pickle': generateSnapshotBytes({
      events: 25_000,
      seed: 51,
      cycleBytes: [2 * MiB, 3 * MiB + 100],
      gcEvery: 4,
    }).bytes,
    'clean.pickle': generateSnapshotBytes({ events: 20_000, seed: 1 }).bytes,
    // The same request failing three times: one finding, its group of entries.
    'retries.pickle': generateSnapshotBytes({ events: 3000, seed: 5, oom: true, oomRetries: 2 }).bytes,
  };
  type Name = keyof typeof scenarios;
  const path = (name: Name) => join(dir, name);
  /** The findings the CLI prints for the file: the page must show the same. */
  const findings = (name: Name) => {
    const s = loadSnapshotBytes(scenarios[name]);
    return diagnose(s, s.devices[0]!, { file: name });
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-web-diagnosis-'));
    mkdirSync(SHOTS, { recursive: true });
    for (const [name, bytes] of Object.entries(scenarios)) writeFileSync(join(dir, name), bytes);
    const served = (Object.keys(scenarios) as Name[]).map(path);
    view = await startView(...served, ...(existsSync(DUMP_ONLY) ? [DUMP_ONLY] : []));
    ({ browser, page } = await openBrowser());
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  const hash = (): URLSearchParams => new URLSearchParams(new URL(page.url()).hash.slice(1));
  /** Opens a file with no tab in the link: the app must land on the diagnosis. */
  const open = async (name: Name | string) => {
    await page.goto('about:blank');
    const file = name in scenarios ? path(name as Name) : name;
    await page.goto(`${view.url}#file=${encodeURIComponent(file)}`);
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 30_000 });
  };
  const cards = () => page.locator('article.finding');
  const headlines = () => cards().locator('.headline').allTextContents();

  it('opens on the Diagnosis tab; an OOM file leads with the OOM, its verdict and the request’s stack', async () => {
    await open('oom.pickle');
    expect(await page.getByRole('tab', { name: 'Diagnosis' }).getAttribute('aria-selected')).toBe('true');
    expect(hash().get('tab')).toBe('diagnosis');
    const expected = findings('oom.pickle');
    expect(await headlines()).toEqual(
      expected.findings.filter((f) => f.kind !== 'warning').map((f) => f.headline),
    );
    const lead = cards().first();
    expect(await lead.getAttribute('class')).toBe('finding oom lead');
    expect(await lead.locator('.headline').textContent()).toMatch(
      /^Out of memory at entry [\d,]+ \(a 1\.05 GiB request\) — fragmentation: /,
    );
    expect(await lead.locator('.site').textContent()).toMatch(/The failing request, from.*forward/);
    expect(await lead.locator('code').textContent()).toBe('memlens oom oom.pickle');
    // The lead headline is the largest text on the page: the answer at a glance.
    // (A string: this file is type-checked without the DOM library.)
    const size = async (sel: string) =>
      Number.parseFloat(
        (await page.evaluate(`getComputedStyle(document.querySelector('${sel}')).fontSize`)) as string,
      );
    expect(await size('.finding.lead .headline')).toBeGreaterThan(await size('.finding.peak .headline'));
    await page.screenshot({ path: join(SHOTS, 'diagnosis-oom.png'), fullPage: true });

    await lead.getByRole('button', { name: /^Show entry [\d,]+ on the timeline/ }).click();
    const entry = expected.findings[0]!.figures.entry as number;
    await expect.poll(() => hash().get('tab')).toBe('timeline');
    expect(hash().get('entry')).toBe(String(entry));
    await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
    // An oom entry opens no allocation: the details pane pins the failing request's stack instead.
    const pane = page.getByRole('complementary', { name: 'failing request' });
    await expect.poll(() => pane.locator('.verdict').textContent()).toBe(expected.findings[0]!.headline);
    expect(await pane.locator('ul.frames li').first().textContent()).toMatch(/^forward \(/);
    await page.screenshot({ path: join(SHOTS, 'diagnosis-oom-timeline.png') });
  });

  it("a repeated OOM: the timeline's pane at any of its entries shows the group's verdict and stack", async () => {
    const [group] = findings('retries.pickle').findings.filter((f) => f.kind === 'oom');
    expect(group!.entries).toHaveLength(3);
    for (const entry of group!.entries!.slice(1)) {
      await page.goto('about:blank');
      await page.goto(
        `${view.url}#file=${encodeURIComponent(path('retries.pickle'))}&tab=timeline&entry=${entry}`,
      );
      await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
      const pane = page.getByRole('complementary', { name: 'failing request' });
      await expect
        .poll(() => pane.locator('.verdict').textContent(), { timeout: 20_000 })
        .toBe(group!.headline);
      expect(await pane.locator('ul.frames li').count()).toBeGreaterThan(0);
    }
  });

  it('a leak file: the leak card (below the far larger fragmentation cost); its link searches the site and pins its newest held allocation', async () => {
    await open('leak.pickle');
    const expected = findings('leak.pickle').findings.filter((f) => f.kind === 'leak');
    // 15 MiB held by the leak against gigabytes of fragmentation: the fragmentation leads.
    expect(await cards().first().getAttribute('class')).toBe('finding fragmentation lead');
    const lead = page.locator('article.finding.leak');
    expect(await lead.getAttribute('class')).toBe('finding leak');
    expect(await lead.locator('.headline').textContent()).toBe(expected[0]!.headline);
    expect(await lead.locator('.headline').textContent()).toMatch(
      /^Leak: train_step .* keeps 3\.00 MiB per iteration/,
    );
    await page.screenshot({ path: join(SHOTS, 'diagnosis-leak.png'), fullPage: true });

    await lead.getByRole('button', { name: 'Show its allocations on the timeline →' }).click();
    const show = expected[0]!.show;
    if (show.view !== 'timeline') throw new Error('a leak links to the timeline');
    await expect.poll(() => hash().get('tab')).toBe('timeline');
    expect(hash().get('q')).toBe(show.search);
    expect(hash().get('alloc')).toBe(String(show.alloc));
    expect(hash().get('entry')).toBe(String(show.entry));
    await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
    await expect
      .poll(() => page.locator('aside.details').getAttribute('data-alloc'))
      .toBe(String(show.alloc));
  });

  it('a fragmentation card opens the fragmented segment in the pool state', async () => {
    await open('leak.pickle');
    const frag = findings('leak.pickle').findings.find((f) => f.kind === 'fragmentation');
    if (frag === undefined || frag.show.view !== 'pool') throw new Error('the leak run fragments its pool');
    await page.locator('article.finding.fragmentation').getByRole('button').click();
    await expect.poll(() => hash().get('tab')).toBe('timeline');
    expect(hash().get('seg')).toBe(String(frag.show.segment));
    expect(hash().get('entry')).toBe(String(frag.show.entry));
  });

  it('GC cycles: the burst card opens the Events table on the burst’s entries', async () => {
    await open('cycles.pickle');
    const lead = page.locator('article.finding.gc');
    expect(await lead.locator('.headline').textContent()).toMatch(/garbage collector/);
    await page.screenshot({ path: join(SHOTS, 'diagnosis-gc.png'), fullPage: true });
    const show = findings('cycles.pickle').findings.find((f) => f.kind === 'gc')!.show;
    if (show.view !== 'events') throw new Error('a burst links to the events');
    await lead.getByRole('button', { name: /^Show the burst's events/ }).click();
    await expect.poll(() => hash().get('tab')).toBe('events');
    expect(hash().get('rcol')).toBe('id');
    expect(hash().get('min')).toBe(String(show.first));
    expect(hash().get('max')).toBe(String(show.last));
  });

  it('the Overview puts the allocator settings below the summary and warnings, across the page', async () => {
    await open('clean.pickle');
    await page.getByRole('tab', { name: 'Overview' }).click();
    await page.waitForSelector('table.summary');
    const box = async (sel: string) => (await page.locator(sel).first().boundingBox())!;
    const summary = await box('table.summary');
    const warnings = await box('main.overview section:nth-of-type(2)');
    const settings = await box('section.settings-section');
    expect(settings.y).toBeGreaterThanOrEqual(
      Math.max(summary.y + summary.height, warnings.y + warnings.height),
    );
    expect(settings.x).toBeLessThanOrEqual(summary.x);
    expect(settings.width).toBeGreaterThan(summary.width);
    await page.screenshot({ path: join(SHOTS, 'overview-clean.png'), fullPage: true });
  });

  it('a clean loop: "No problem found" with what was checked, then the peak; no OOM, leak or burst card', async () => {
    await open('clean.pickle');
    const checked = page.getByRole('region', { name: 'checked' });
    await expect.poll(() => checked.locator('h2').textContent()).toBe('✓ No problem found on cuda:0');
    expect(await checked.locator('li').allTextContents()).toEqual(findings('clean.pickle').checked);
    for (const kind of ['oom', 'leak', 'gc'])
      expect(await page.locator(`article.finding.${kind}`).count()).toBe(0);
    expect(await cards().first().getAttribute('class')).toBe('finding peak');
    await page.screenshot({ path: join(SHOTS, 'diagnosis-clean.png'), fullPage: true });
    await cards().first().getByRole('button').click();
    await expect.poll(() => hash().get('tab')).toBe('flame');
    expect(hash().get('fat')).toBe('peak');
  });

  it.skipIf(!existsSync(DUMP_ONLY))(
    'a dump-only corpus file: the dump’s state, and says it has no trace',
    async () => {
      await open(DUMP_ONLY);
      expect(await cards().first().getAttribute('class')).toBe('finding peak');
      expect(await cards().first().locator('.headline').textContent()).toMatch(/^At the dump /);
      expect(await page.getByRole('region', { name: 'checked' }).count()).toBe(0);
      const notes = page.getByRole('region', { name: 'what the file cannot tell' });
      expect(await notes.locator('li').first().textContent()).toMatch(/^Dump only: no trace recorded/);
      await page.screenshot({ path: join(SHOTS, 'diagnosis-dump-only.png'), fullPage: true });
    },
  );
});
