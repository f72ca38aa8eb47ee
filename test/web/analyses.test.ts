import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { peakOf } from '../../src/engine/analyses/peak/peak.js';
import { formatBytes, formatCount } from '../../src/engine/base/format.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The flame graph and the analysis panels in headless Chromium, on generated snapshots whose
 * answers were planted: a leak kept every step, and an OOM caused by fragmentation.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);
const MiB = 1024 * 1024;
const bytesTitle = (n: number) => `${formatCount(n)} bytes`;

describe.skipIf(!ready && process.env.CI === undefined)(
  'flame graph and analyses in headless Chromium',
  () => {
    let dir = '';
    let view: RunningView;
    let browser: Browser;
    let page: Page;
    const leak = 3 * MiB + 512;
    const leaky = generateSnapshotBytes({ events: 12_000, seed: 71, leakBytes: leak });
    const oom = generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' });
    const cycles = generateSnapshotBytes({
      events: 12_000,
      seed: 51,
      cycleBytes: [2 * MiB, 3 * MiB + 100],
      gcEvery: 4,
    });
    const leakFile = () => join(dir, 'leak.pickle');
    const oomFile = () => join(dir, 'oom-fragmentation.pickle');
    const gcFile = () => join(dir, 'gc-cycles.pickle');

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'memlens-web-analyses-'));
      mkdirSync(ARTIFACTS, { recursive: true });
      writeFileSync(leakFile(), leaky.bytes);
      writeFileSync(oomFile(), oom.bytes);
      writeFileSync(gcFile(), cycles.bytes);
      view = await startView(leakFile(), oomFile(), gcFile());
      ({ browser, page } = await openBrowser());
    });

    afterAll(async () => {
      await browser?.close();
      await view?.stop();
    });

    const hash = (): URLSearchParams => new URLSearchParams(new URL(page.url()).hash.slice(1));
    const open = async (file: string, rest: string) => {
      await page.goto(`${view.url}#file=${encodeURIComponent(file)}&${rest}`);
      await page.reload(); // a hash-only goto does not reload the app
    };
    const underList = () => page.getByLabel('frames under the zoomed frame');

    it('the flame graph at the peak has the widest site the peak analysis reports, down to its bytes', async () => {
      await open(leakFile(), 'tab=flame');
      await page.getByRole('button', { name: 'at the peak' }).click();
      const s = loadSnapshotBytes(leaky.bytes);
      const top = peakOf(s, s.devices[0]!).groups[0]!;
      // The peak's total is what the generator planted.
      await expect
        .poll(() => page.locator('.flame-summary').textContent())
        .toContain(`live after entry ${formatCount(s.devices[0]!.totals.peakAllocatedAt)}`);
      // Follow the site from its outermost user frame in; its innermost frame holds exactly its bytes.
      const path = [...top.frames].reverse();
      for (const [k, f] of path.entries()) {
        const row = underList()
          .locator('tr')
          .filter({ has: page.locator(`button[title="${f.filename}:${f.line}"]`, { hasText: f.name }) });
        await expect.poll(() => row.count()).toBe(1);
        if (k === path.length - 1)
          expect(await row.locator('td span').first().getAttribute('title')).toBe(bytesTitle(top.bytes));
        await row.getByRole('button').click();
      }
      // A name other frames share (a model's forwards) is labelled with its file and line.
      const innermost = top.frames[0]!;
      const crumb = new RegExp(
        `^${innermost.name}( \\(${innermost.filename.split('/').pop()}:${innermost.line}\\))?$`,
      );
      await expect.poll(() => page.locator('.crumbs [aria-current="true"]').textContent()).toMatch(crumb);
      await expect
        .poll(() => page.locator('.flame-lists h4').nth(1).textContent())
        .toContain(`Allocations under it: ${formatCount(top.count)}`);
      await page.screenshot({ path: join(ARTIFACTS, 'flame-zoomed.png'), fullPage: true });
      // The zoom and what the graph shows are in the URL: a reload comes back to the same frame.
      await expect.poll(() => hash().get('fnode')).not.toBeNull();
      expect(hash().get('fat')).toBe('peak');
      await page.reload();
      await expect.poll(() => page.locator('.crumbs [aria-current="true"]').textContent()).toMatch(crumb);
    });

    it('clicking a frame in the canvas zooms into it; hovering shows its exact bytes; Escape zooms out', async () => {
      await page.locator('.crumbs button').first().click();
      const canvas = page.getByLabel(/^flame graph/);
      const box = (await canvas.boundingBox())!;
      const widest = await underList().locator('tr').first().getByRole('button').textContent();
      await page.mouse.move(box.x + 4, box.y + 18 + 9);
      await expect.poll(() => page.locator('.flame-tip strong').textContent()).toBe(widest);
      await page.mouse.move(box.x + box.width / 2, box.y + 9);
      const total = Number(
        (await page.locator('.flame-tip').textContent())!
          .match(/\(([\d,]+) bytes\)/)![1]!
          .replaceAll(',', ''),
      );
      const s = loadSnapshotBytes(leaky.bytes);
      expect(total).toBe(s.devices[0]!.totals.allocated[s.devices[0]!.totals.peakAllocatedAt]);
      await page.screenshot({ path: join(ARTIFACTS, 'flame-peak.png'), fullPage: true });
      await page.mouse.click(box.x + 4, box.y + 18 + 9);
      await expect.poll(() => page.locator('.crumbs [aria-current="true"]').textContent()).toBe(widest);
      await expect.poll(() => page.locator('.crumbs button').count()).toBe(2);
      await canvas.press('Escape');
      await expect.poll(() => page.locator('.crumbs button').count()).toBe(1);
    });

    it('an allocation listed under a frame pins it in the timeline and pool state', async () => {
      const first = page.getByLabel('allocations under the zoomed frame').getByRole('button').first();
      const id = (await first.textContent())!.slice(1);
      await first.click();
      await expect.poll(() => hash().get('alloc')).toBe(id);
      await expect.poll(() => page.getByLabel('allocation details').getAttribute('data-alloc')).toBe(id);
      await page.getByRole('tab', { name: /Timeline/ }).click();
      await expect.poll(() => page.getByLabel('allocation details').getAttribute('data-alloc')).toBe(id);
      await expect
        .poll(() => page.locator(`.pool button[data-alloc="${id}"]`).getAttribute('aria-pressed'))
        .toBe('true');
    });

    it('the leaks panel names the planted site, its bytes per iteration, and says leak', async () => {
      await open(leakFile(), 'tab=analyses&panel=leaks');
      const row = page.locator('section[aria-label="leaks"] tr.leak');
      await expect.poll(() => row.count()).toBe(1);
      const text = (await row.textContent())!;
      expect(text).toContain('train_step');
      expect(text).toMatch(/train\.py:218/);
      expect(await row.locator('td.num span').nth(1).getAttribute('title')).toBe(bytesTitle(leak));
      await expect
        .poll(() => page.locator('section[aria-label="leaks"] .verdict').textContent())
        .toMatch(/train_step .*train\.py:218\) grows by 3\.00 MiB per iteration/);
      await page.screenshot({ path: join(ARTIFACTS, 'analyses-leaks.png'), fullPage: true });
      for (const [panel, name] of [
        ['gc', 'GC bursts'],
        ['frag', 'Fragmentation'],
        ['categories', 'Categories'],
      ]) {
        await page.getByRole('tab', { name }).click();
        await expect.poll(() => hash().get('panel')).toBe(panel);
        await expect.poll(() => page.locator('.panel section').count()).toBe(1);
        await page.screenshot({ path: join(ARTIFACTS, `analyses-${panel}.png`), fullPage: true });
      }
    });

    it('a leak site links its newest held allocation (pinned everywhere) and the Blocks table through its frame', async () => {
      await page.getByRole('tab', { name: 'Leaks' }).click();
      const row = page.locator('section[aria-label="leaks"] tr.leak');
      const links = row.locator('button[data-alloc]');
      await expect.poll(() => links.count()).toBe(2);
      const id = Number(await links.last().getAttribute('data-alloc'));
      await links.last().click();
      await expect.poll(() => hash().get('tab')).toBe('timeline');
      expect(Number(hash().get('alloc'))).toBe(id);
      // Independently of the page: that entry is an allocation of the planted leak's size, and it is this one.
      const d = loadSnapshotBytes(leaky.bytes).devices[0]!;
      const entry = Number(hash().get('entry'));
      expect(d.trace.size[entry]).toBe(leak);
      expect(d.allocations.ofEntry[entry]).toBe(id);
      await expect
        .poll(() => page.getByLabel('allocation details').getAttribute('data-alloc'))
        .toBe(String(id));
      await expect
        .poll(() => page.locator(`.pool button[data-alloc="${id}"]`).getAttribute('aria-pressed'))
        .toBe('true');
      await page.getByRole('tab', { name: 'Analyses' }).click();
      await row.getByRole('button', { name: 'blocks through train_step' }).click();
      await expect.poll(() => hash().get('tab')).toBe('blocks');
      expect(hash().get('frame')).toBe('train_step');
    });

    it('a worst fragmented segment opens the pool state at that moment with the segment outlined', async () => {
      await open(oomFile(), 'tab=analyses&panel=frag');
      const link = page.locator('section[aria-label="fragmentation"] button[data-segment]').first();
      await expect.poll(() => link.count()).toBe(1);
      const address = await link.getAttribute('data-segment');
      await link.click();
      await expect.poll(() => hash().get('tab')).toBe('timeline');
      expect(hash().get('seg')).toBe(address);
      const entry = hash().get('entry');
      await expect.poll(() => page.getByLabel('pool state').getAttribute('data-entry')).toBe(entry);
      await expect.poll(() => page.locator(`.segment.focused[data-address="${address}"]`).count()).toBe(1);
      await page.getByLabel('pool state').screenshot({ path: join(ARTIFACTS, 'pool-segment-linked.png') });
    });

    it("a worst fragmented segment's blocks link opens the Blocks table on the blocks in its address range", async () => {
      await open(oomFile(), 'tab=analyses&panel=frag');
      const link = page.locator('section[aria-label="fragmentation"] button[data-segment-blocks]').first();
      await expect.poll(() => link.count()).toBe(1);
      const address = Number(await link.getAttribute('data-segment-blocks'));
      const size = Number(
        await page.locator(`button[data-segment="${address}"]`).first().getAttribute('data-size'),
      );
      await link.click();
      await expect.poll(() => hash().get('tab')).toBe('blocks');
      expect(hash().get('addr')).toBe(`0x${address.toString(16)}..0x${(address + size).toString(16)}`);
      // Independently of the page: the model's allocations whose address lies in the segment.
      const a = loadSnapshotBytes(oom.bytes).devices[0]!.allocations;
      let inside = 0;
      for (let id = 0; id < a.count; id++)
        if (a.addr[id]! >= address && a.addr[id]! < address + size) inside++;
      expect(inside).toBeGreaterThan(0);
      const table = page.getByLabel('blocks table');
      await expect.poll(() => table.getAttribute('data-count'), { timeout: 30_000 }).toBe(String(inside));
      await page.screenshot({ path: join(ARTIFACTS, 'blocks-segment-linked.png') });
    });

    it('a GC burst links the Events table on its entries and the Blocks table through its sites', async () => {
      await open(gcFile(), 'tab=analyses&panel=gc');
      const link = page.locator('section[aria-label="gc bursts"] button[data-events]').first();
      await expect.poll(() => link.count()).toBe(1);
      const [first, last] = (await link.getAttribute('data-events'))!.split('..').map(Number);
      await page.screenshot({ path: join(ARTIFACTS, 'analyses-gc-links.png'), fullPage: true });
      await link.click();
      await expect.poll(() => hash().get('tab')).toBe('events');
      expect([hash().get('rcol'), hash().get('min'), hash().get('max')]).toEqual([
        'id',
        String(first),
        String(last),
      ]);
      const table = page.getByLabel('events table');
      await expect
        .poll(() => table.getAttribute('data-count'), { timeout: 30_000 })
        .toBe(String(last! - first! + 1));
      // A site of what the burst freed: the Blocks table through its innermost frame.
      await page.getByRole('tab', { name: 'Analyses' }).click();
      const through = page
        .locator('section[aria-label="gc bursts"] button', { hasText: 'blocks through' })
        .first();
      const frame = (await through.textContent())!.replace('blocks through ', '');
      await through.click();
      await expect.poll(() => hash().get('tab')).toBe('blocks');
      expect(hash().get('frame')).toBe(frame);
    });

    it('the oom panel on a planted fragmentation OOM says fragmentation; its entry link selects the entry', async () => {
      const facts = oom.expected.oom_causes![0]!;
      await open(oomFile(), 'tab=analyses&panel=oom');
      const verdict = page.locator('section[aria-label="oom"] .verdict').first();
      await expect.poll(() => verdict.textContent()).toBe(facts.verdict);
      expect(facts.verdict).toBe('fragmentation');
      await page.screenshot({ path: join(ARTIFACTS, 'analyses-oom.png'), fullPage: true });
      const s = loadSnapshotBytes(oom.bytes);
      const t = s.devices[0]!.trace;
      const link = page.locator('section[aria-label="oom"] button[data-entry]').first();
      const entry = Number(await link.getAttribute('data-entry'));
      expect(s.traceColumns.actionNames[t.action[entry]!]).toBe('oom');
      await link.click();
      await expect.poll(() => hash().get('tab')).toBe('timeline');
      await expect.poll(() => hash().get('entry')).toBe(String(entry));
      await expect.poll(() => page.getByLabel('pool state').getAttribute('data-entry')).toBe(String(entry));
      await expect.poll(() => page.locator('.event b').textContent()).toBe('oom');
      // The entry line says what memory_viz says of an oom: the request, and what CUDA had free.
      const free = t.deviceFree![entry]!;
      const line = (await page.locator('.event').textContent())!;
      expect(line).toContain(`requested ${formatBytes(t.size[entry]!)}`);
      expect(line).toContain(`CUDA had ${formatBytes(free)} free`);
      await expect
        .poll(() =>
          page.locator('.event span[title]').evaluateAll((s) => s.map((e) => e.getAttribute('title'))),
        )
        .toContain(bytesTitle(free));
      await page.getByLabel('pool state').screenshot({ path: join(ARTIFACTS, 'pool-at-oom.png') });
    });
  },
);
