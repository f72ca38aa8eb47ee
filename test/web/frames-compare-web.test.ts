import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * Compare with "full stacks" in headless Chromium: sites match by whole stacks, yet the headline
 * and each site's cell lead with the user's frame (the planted rank buffer), not the recorder's.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/frames';
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html'));

describe.skipIf(!ready && process.env.CI === undefined)('compare, full stacks: the user frame leads', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const rank = { events: 3000, seed: 83, streams: 1 };
  const b = generateSnapshotBytes({ ...rank, extraBuffer: 2 * 2 ** 30 });
  const site = b.expected.extra_buffer!.site;
  const file = (name: string) => join(dir, name);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-frames-compare-'));
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(file('rank0.pickle'), generateSnapshotBytes(rank).bytes);
    writeFileSync(file('rank1.pickle'), b.bytes);
    view = await startView(file('rank0.pickle'), file('rank1.pickle'));
    ({ browser, page } = await openBrowser());
  });
  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  it('the headline and the first site name allocate_rank_buffer, never torch::unwind', async () => {
    await page.goto(
      `${view.url}#file=${encodeURIComponent(file('rank0.pickle'))}&tab=analyses&panel=compare`,
    );
    await page.getByLabel('file to compare', { exact: true }).selectOption(file('rank1.pickle'));
    const compare = page.locator('section[aria-label="compare"]');
    await compare.locator('tr.site').first().waitFor({ timeout: 30_000 });
    await compare.getByLabel('full stacks').check();
    const headline = compare.locator('.diff ul.plain li', { hasText: 'the largest difference' }).first();
    await expect.poll(() => headline.textContent(), { timeout: 30_000 }).toContain(`from ${site.name} (`);
    expect(await compare.locator('.diff ul.plain').first().textContent()).not.toMatch(/unwind|\?\?:0/);
    const first = compare.locator('section[aria-label="live at dump time"] tr.site').first();
    expect(await first.locator('.frames li').first().textContent()).toMatch(new RegExp(`^${site.name} \\(`));
    await compare.screenshot({ path: join(SHOTS, 'compare-full-stacks.png') });
  });
});
