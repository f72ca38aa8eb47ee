import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import type { DeviceModel } from '../../src/engine/model/snapshot.js';
import { firstAtOrAfter } from '../../src/engine/views/timeline/timeline-axis.js';
import { timelinePage } from '../helpers/timeline-page.js';
import { CHROMIUM } from '../helpers/view-server.js';

/**
 * The timeline's pools stack (memory_viz's Allocated Memory incl. Private Pools) and its two zoom
 * modes (MindStudio Insight's horizontal and proportional), end to end in headless Chromium.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

/** Highest active or reserved bytes after any entry a window's columns show (each also shows the state carried into it). */
function windowTop(d: DeviceModel, [x0, x1]: [number, number]): number {
  const t = d.totals;
  const at = (k: number) =>
    k < 0 ? Math.max(t.start.active, t.start.reserved) : Math.max(t.active[k]!, t.reserved[k]!);
  let top = 0;
  for (let k = firstAtOrAfter(d, 'entry', x0) - 1; k < firstAtOrAfter(d, 'entry', x1); k++)
    top = Math.max(top, at(k));
  return top;
}

describe.skipIf(!ready && process.env.CI === undefined)('timeline pools stack and zoom modes', () => {
  const generated = generateSnapshotBytes({ events: 6000, seed: 7, streams: 2, privatePool: true });
  const s = loadSnapshotBytes(generated.bytes);
  const d = s.devices[0]!;
  const n = d.trace.length;
  const app = timelinePage(generated.bytes, ARTIFACTS);
  const { hash, plot, open } = app;
  let page: Page;
  beforeAll(() => {
    page = app.page();
  });

  /** The window drawn and the y axis top of the layer that is ready for it. */
  const shown = async (): Promise<{ window: [number, number]; top: number }> => {
    await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
    const c = plot();
    const [a, b] = (await c.getAttribute('data-window'))!.split(':').map(Number);
    return { window: [a!, b!], top: Number(await c.getAttribute('data-y-top')) };
  };

  it('stacks pools: one envelope per (pool, stream), the private pool named; a click pins the allocation under it', async () => {
    await open('&stack=pools');
    const legend = page.getByLabel('pools legend');
    await expect.poll(() => legend.textContent()).toContain('private pool (0, 1)');
    // The generator's default pool serves the default stream and two side streams.
    expect(await legend.locator('li', { hasText: 'default pool' }).count()).toBe(3);
    const box = (await plot().boundingBox())!;
    // Low in the plot: the parameters, allocated first, at the bottom of the default stream's envelope.
    const [x, y] = [box.x + box.width * 0.6, box.y + box.height - 40];
    await page.mouse.move(x, y);
    await expect
      .poll(() => page.locator('.hover').textContent())
      .toMatch(/allocation #\d+|allocations under/);
    await page.mouse.click(x, y);
    await expect.poll(() => hash().get('alloc')).not.toBeNull();
    const entry = Number(hash().get('entry'));
    const alloc = Number(hash().get('alloc'));
    // Independently of the page: the allocation is live after that entry, and the details and pool state show it.
    expect([...d.live.aliveAfter(entry)]).toContain(alloc);
    await expect
      .poll(() => page.getByLabel('allocation details').getAttribute('data-alloc'))
      .toBe(String(alloc));
    await expect.poll(() => page.getByLabel('pool state').getAttribute('data-entry')).toBe(String(entry));
    expect(hash().get('stack')).toBe('pools');
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-pools.png') });
  });

  it('proportional zoom fits the y axis to the window, horizontal keeps the whole trace top; the mode is in the URL', async () => {
    const whole = windowTop(d, [0, n]);
    // The first eighth of the trace: before the training steps' peak, so the two tops differ.
    const start: [number, number] = [0, n / 8];
    await open(`&x0=${start[0]}&x1=${start[1]}`);
    expect(await page.getByRole('button', { name: /zoom: proportional/ }).count()).toBe(1);
    let now = await shown();
    expect(now.window).toEqual(start);
    expect(now.top).toBe(windowTop(d, start));
    expect(now.top).toBeLessThan(whole);

    // Ctrl+↑: zoom in around the middle, proportionally (the default mode stays).
    await page.keyboard.press('Control+ArrowUp');
    const half: [number, number] = [n / 32, (3 * n) / 32];
    await expect.poll(async () => (await shown()).window).toEqual(half);
    now = await shown();
    expect(now.top).toBe(windowTop(d, half));
    expect(hash().get('zoom')).toBeNull();

    // Shift+↓: zoom out horizontally: the mode switches and the y axis is the whole trace's.
    await page.keyboard.press('Shift+ArrowDown');
    await expect.poll(() => hash().get('zoom')).toBe('horizontal');
    await expect.poll(async () => (await shown()).window).toEqual(start);
    await expect.poll(async () => (await shown()).top).toBe(whole);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-zoom-horizontal.png') });

    // A reload restores the mode; the button switches back. The URL takes the window once the
    // gesture settles: reloading before that would restore the window before it.
    await expect.poll(() => [Number(hash().get('x0')), Number(hash().get('x1'))]).toEqual(start);
    await page.reload();
    await expect.poll(async () => (await shown()).top).toBe(whole);
    expect((await shown()).window).toEqual(start);
    const button = page.getByRole('button', { name: /zoom: horizontal/ });
    expect(await button.getAttribute('aria-pressed')).toBe('true');
    await button.click();
    await expect.poll(() => hash().get('zoom')).toBeNull();
    await expect.poll(async () => (await shown()).top).toBe(windowTop(d, start));
  });
});
