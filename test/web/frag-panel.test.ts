import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { nonReleasablePeakWords } from '../../src/engine/analyses/fragmentation/frag-words.js';
import { fragmentationOf } from '../../src/engine/analyses/fragmentation/fragmentation.js';
import { formatCount } from '../../src/engine/base/format.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/** The web Fragmentation panel shows the CLI's non-releasable figures (same engine call, same words). */
const APP = join(import.meta.dirname, '..', '..', 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

describe.skipIf(!ready && process.env.CI === undefined)('frag panel: non-releasable memory over time', () => {
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const { bytes } = generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' });
  const file = join(mkdtempSync(join(tmpdir(), 'memlens-frag-panel-')), 'oom-fragmentation.pickle');

  beforeAll(async () => {
    writeFileSync(file, bytes);
    view = await startView(file);
    ({ browser, page } = await openBrowser());
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  it('says when non-releasable memory peaked and shows it before each segment_alloc', async () => {
    const s = loadSnapshotBytes(bytes);
    const f = fragmentationOf(s, s.devices[0]!);
    expect(f.non_releasable_peak!.inactive_split_bytes).toBeGreaterThan(0);
    await page.goto(`${view.url}#file=${encodeURIComponent(file)}&tab=analyses&panel=frag`);
    await page.reload();
    const section = page.locator('section[aria-label="fragmentation"]');
    const words = nonReleasablePeakWords(f.non_releasable_peak!, f.curve[0]!.time_us);
    await expect.poll(() => section.textContent(), { timeout: 30_000 }).toContain(words);
    const top = [...f.segment_allocs].sort(
      (x, y) => y.reserved_minus_allocated_before_bytes - x.reserved_minus_allocated_before_bytes,
    )[0]!;
    const table = section.locator('table').last();
    const column = (await table.locator('th').allTextContents()).indexOf('non-releasable before');
    expect(column).toBeGreaterThan(0);
    const cell = table.locator('tbody tr').first().locator('td').nth(column).locator('span');
    expect(await cell.getAttribute('title')).toBe(`${formatCount(top.inactive_split_before_bytes)} bytes`);
  });
});
