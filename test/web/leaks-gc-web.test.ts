import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { gcBurstsOf } from '../../src/engine/analyses/gc/gc-bursts.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The leaks panel's marker and range fields, and the gc panel's patterns, in headless Chromium:
 * a real corpus file without iterations, a generated leak (marker given by hand), and a long run
 * of collections.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/gc-cli';
const APP = join(ROOT, 'dist', 'web', 'index.html');
const CORPUS = join(ROOT, '..', 'shared', 'corpus');
const noIterations = existsSync(CORPUS)
  ? readdirSync(CORPUS).find((f) => f.startsWith('MAGMA27_') && f.endsWith('.pickle'))
  : undefined;
const ready = existsSync(CHROMIUM) && existsSync(APP) && noIterations !== undefined;
const MiB = 1024 * 1024;

describe.skipIf(!ready)('leaks and gc panels in headless Chromium', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const leaky = generateSnapshotBytes({ events: 12_000, seed: 71, leakBytes: MiB });
  const cycles = generateSnapshotBytes({
    events: 120_000,
    seed: 3,
    cycleBytes: [4 * MiB, 4 * MiB],
    gcEvery: 3,
  });
  const leakFile = () => join(dir, 'leak.pickle');
  const gcFile = () => join(dir, 'gc-long.pickle');
  const corpusFile = join(CORPUS, noIterations ?? '');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-web-leaks-gc-'));
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(leakFile(), leaky.bytes);
    writeFileSync(gcFile(), cycles.bytes);
    view = await startView(leakFile(), gcFile(), corpusFile);
    ({ browser, page } = await openBrowser());
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  const open = async (file: string, rest: string) => {
    await page.goto(`${view.url}#file=${encodeURIComponent(file)}&${rest}`);
    await page.reload();
  };
  const leaks = () => page.locator('section[aria-label="leaks"]');

  it('without iterations: says none were found, what was tried, and offers the marker and range fields', async () => {
    await open(corpusFile, 'tab=analyses&panel=leaks');
    await expect
      .poll(() => leaks().locator('.verdict').textContent(), { timeout: 30_000 })
      .toMatch(/^no iteration markers found, so leaks were not judged/);
    expect(await leaks().locator('ul.tried li').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ProfilerStep#N annotations: /)]),
    );
    expect(await leaks().locator('.give-iterations').textContent()).toMatch(/iteration marker/);
    await page.screenshot({ path: join(SHOTS, 'leaks-no-iterations.png'), fullPage: true });
    // A range as printed, commas and all: what it left allocated.
    await leaks().getByLabel('range').fill('1,000:2,000');
    await leaks().getByRole('button', { name: 'judge' }).click();
    await expect
      .poll(() => leaks().locator('.unreleased').textContent(), { timeout: 30_000 })
      .toMatch(
        /^from entry 1,000 to entry 2,000: [\d,]+ allocations?, .* made there and still allocated at its end/,
      );
    await page.screenshot({ path: join(SHOTS, 'leaks-range.png'), fullPage: true });
    await leaks().getByLabel('range').fill('1000-2000');
    expect(await leaks().getByRole('alert').textContent()).toMatch(/expected entries A:B as printed/);
  });

  it('a marker typed in the field gives the iterations it names', async () => {
    await open(leakFile(), 'tab=analyses&panel=leaks');
    await expect
      .poll(() => leaks().locator('.verdict').textContent(), { timeout: 30_000 })
      .toMatch(/grows by 1\.00 MiB per iteration/);
    await leaks().getByLabel('marker').fill('train_step');
    await leaks().getByRole('button', { name: 'judge' }).click();
    await expect.poll(() => leaks().locator('p').first().textContent()).toMatch(/from calls to 'train_step'/);
    await expect
      .poll(() => leaks().locator('.verdict').textContent())
      .toMatch(/grows by 1\.00 MiB per iteration/);
  });

  it('the gc panel shows a long run of collections as one pattern, times into the trace', async () => {
    const s = loadSnapshotBytes(cycles.bytes);
    const r = gcBurstsOf(s, s.devices[0]!);
    expect(r.bursts.length).toBeGreaterThan(20);
    await open(gcFile(), 'tab=analyses&panel=gc');
    const section = page.locator('section[aria-label="gc bursts"]');
    const pattern = section.locator('.pattern');
    await expect.poll(() => pattern.count(), { timeout: 30_000 }).toBe(1);
    expect(await pattern.getAttribute('data-pattern-count')).toBe(String(r.bursts.length));
    expect(await pattern.locator('p').first().textContent()).toMatch(
      new RegExp(
        `^${r.bursts.length} bursts every ~3 iterations .* into the trace\\): 6 allocations, 24\\.0 MiB each$`,
      ),
    );
    // No burst listed one by one, and no raw epoch microseconds.
    expect(await section.locator('.burst:not(.pattern)').count()).toBe(0);
    expect(await section.textContent()).not.toMatch(/time_us|\d{13}/);
    await page.screenshot({ path: join(SHOTS, 'gc-pattern.png'), fullPage: true });
  });
});
