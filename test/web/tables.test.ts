import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { unreleasedIds, unreleasedIn } from '../../src/engine/analyses/leaks/unreleased.js';
import {
  allocationStreams,
  deviceStreams,
  streamView,
} from '../../src/engine/analyses/summary/stream-view.js';
import { formatCount } from '../../src/engine/base/format.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { blockTable, eventTable, selectRows } from '../../src/engine/views/tables/tables.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { CLI, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The Events and Blocks tables and the timeline search in headless Chromium, on a corpus file:
 * row counts, sort and filters against the engine's own table selection, linked selection with
 * the timeline and pool state both ways, a frame search, and CSV export against the CLI's CSV.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const CORPUS = join(ROOT, '..', 'shared', 'corpus');
const FILE = join(
  CORPUS,
  'Wedsonlin_assignment2__results_medium_128_training_memory_snapshot__87b0864.pickle',
);
const ARTIFACTS = join(ROOT, 'test-artifacts');
/** A generated trace with work planted on two streams besides the default one. */
const STREAMS_BYTES = generateSnapshotBytes({ events: 6000, seed: 31, streams: 2 }).bytes;
const STREAMS_FILE = join(mkdtempSync(join(tmpdir(), 'memlens-tables-')), 'streams.pickle');
writeFileSync(STREAMS_FILE, STREAMS_BYTES);
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html')) && existsSync(FILE);

describe.skipIf(!ready && process.env.CI === undefined)(
  'Events and Blocks tables in headless Chromium',
  () => {
    let view: RunningView;
    let browser: Browser;
    let page: Page;
    const snapshot = loadSnapshotBytes(new Uint8Array(readFileSync(FILE)));
    const device = snapshot.devices[0]!;
    const events = eventTable(snapshot, device);
    const blocks = blockTable(snapshot, device);

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      view = await startView(FILE, STREAMS_FILE);
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
      page = await browser.newPage({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
      page.setDefaultTimeout(15_000); // a stuck action fails with Playwright's reason, not the test's timeout
    });

    afterAll(async () => {
      await browser?.close();
      await view?.stop();
    });

    const hash = (): URLSearchParams => new URLSearchParams(new URL(page.url()).hash.slice(1));
    const open = (params: string) => openFile(FILE, params);
    /**
     * Leaves the page first: a hash-only goto keeps the old app alive, and a state update it had
     * in flight would write its own hash back before a reload.
     */
    const openFile = async (file: string, params: string) => {
      await page.goto('about:blank');
      await page.goto(`${view.url}#file=${encodeURIComponent(file)}&${params}`);
    };
    /** The page answers through its worker; on a loaded 2-core machine that takes more than vitest's 1 s. */
    const poll = <T>(fn: () => T | Promise<T>, opts: { timeout: number } = { timeout: 10_000 }) =>
      expect.poll(fn, opts);
    const table = (kind: string) => page.locator(`table[aria-label="${kind} table"]`);
    const count = async (kind: string) => Number(await table(kind).getAttribute('data-count'));
    const firstIds = (kind: string, n: number) =>
      table(kind)
        .locator('tbody tr[data-id]')
        .evaluateAll((rows, k) => rows.slice(0, k).map((r) => Number(r.getAttribute('data-id'))), n);
    /** The row lies inside the table's scrolled viewport. */
    const inView = (row: ReturnType<Page['locator']>) =>
      row.evaluate((r) => {
        const box = r.getBoundingClientRect();
        const port = r.closest('section.grid')!.getBoundingClientRect();
        return box.top >= port.top && box.bottom <= port.bottom;
      });
    const setField = async (label: string, value: string) => {
      const input = page.getByLabel(label, { exact: true });
      await input.fill(value);
      await input.press('Enter');
    };

    it('both tables list every row the engine has', async () => {
      await open('tab=events');
      await poll(() => count('events'), { timeout: 30_000 }).toBe(events.length);
      await poll(() => firstIds('events', 3)).toEqual([0, 1, 2]);
      await page.screenshot({ path: join(ARTIFACTS, 'events-table.png') });
      await page.getByRole('tab', { name: 'Blocks' }).click();
      await poll(() => count('blocks')).toBe(blocks.length);
      await page.screenshot({ path: join(ARTIFACTS, 'blocks-table.png') });
    });

    it('a header click sorts (ascending, then descending) as the engine sorts', async () => {
      await open('tab=blocks');
      const header = table('blocks').locator('th[data-column="size"] button');
      await header.click();
      await poll(() => firstIds('blocks', 5)).toEqual([
        ...selectRows(blocks, { sort: 'size' }).subarray(0, 5),
      ]);
      await header.click();
      await poll(() => firstIds('blocks', 5)).toEqual([
        ...selectRows(blocks, { sort: '-size' }).subarray(0, 5),
      ]);
      await poll(() => table('blocks').locator('th[data-column="size"]').getAttribute('aria-sort')).toBe(
        'descending',
      );
      await header.click(); // back to id order for the tests that follow
    });

    it('range and frame filters narrow the rows to what the CLI filter keeps', async () => {
      await open('tab=events');
      await poll(() => count('events'), { timeout: 30_000 }).toBe(events.length);
      await setField('events min', '1 MiB');
      const big = selectRows(events, { filter: ['size>=1048576'] }).length;
      expect(big).toBeGreaterThan(0);
      expect(big).toBeLessThan(events.length);
      await poll(() => count('events')).toBe(big);
      await setField('events frame', 'optimizer.py');
      const both = selectRows(events, { filter: ['size>=1048576', 'frame~optimizer.py'] }).length;
      expect(both).toBeLessThan(big);
      await poll(() => count('events')).toBe(both);
      await setField('events min', '');
      await setField('events frame', '');
      await poll(() => count('events')).toBe(events.length);
      await page.getByLabel('events action', { exact: true }).selectOption('free_completed');
      const frees = selectRows(events, { filter: ['action=free_completed'] }).length;
      expect(frees).toBeGreaterThan(0);
      await poll(() => count('events')).toBe(frees);
      expect(hash().get('is')).toBe('free_completed');
      await page.getByLabel('events action', { exact: true }).selectOption('');
      await poll(() => count('events')).toBe(events.length);
    });

    it('filters and sort live in the URL: a shared link restores the same rows', async () => {
      await open('tab=events&rcol=size&min=1%20MiB&frame=optimizer.py&sort=-size');
      const filter = ['size>=1048576', 'frame~optimizer.py'];
      const expected = selectRows(events, { filter, sort: '-size' });
      await poll(() => count('events'), { timeout: 30_000 }).toBe(expected.length);
      await poll(() => firstIds('events', 4)).toEqual([...expected.subarray(0, 4)]);
      expect(await page.getByLabel('events min', { exact: true }).inputValue()).toBe('1 MiB');
      await setField('events max', '4 MiB');
      await poll(() => hash().get('max')).toBe('4 MiB');
      expect(hash().get('sort')).toBe('-size');
      await setField('events max', '');
      await setField('events min', '');
      await setField('events frame', '');
      await table('events').locator('th[data-column="size"] button').click(); // -size -> id order
      await poll(() => hash().get('sort')).toBeNull();
    });

    it('exported CSV is the CLI’s CSV for the same filter', async () => {
      await open('tab=events');
      await setField('events min', '1 MiB');
      await setField('events frame', 'model.py');
      const filter = ['size>=1048576', 'frame~model.py'];
      await poll(() => count('events')).toBe(selectRows(events, { filter }).length);
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'export CSV' }).click();
      const saved = await (await download).path();
      const cli = spawnSync(
        process.execPath,
        [...NODE_FLAGS, CLI, 'events', FILE, '--format', 'csv', ...filter.flatMap((f) => ['--filter', f])],
        { encoding: 'utf8', maxBuffer: 1 << 28 },
      );
      expect(cli.status).toBe(0);
      const csv = readFileSync(saved, 'utf8');
      expect(csv.split('\n').length).toBeGreaterThan(2);
      expect(csv).toBe(cli.stdout);
      await setField('events min', '');
      await setField('events frame', '');
    });

    it('“unreleased in timeline window” keeps the blocks made in the window and not freed by its end', async () => {
      // Entry i spans [i, i+1) on the entry axis: this window covers entries 10000..11999.
      await open('tab=blocks&axis=entry&x0=10000&x1=12000');
      await poll(() => count('blocks'), { timeout: 30_000 }).toBe(blocks.length);
      const expected = unreleasedIn(snapshot, device, { entries: [10_000, 11_999] }).count;
      expect(expected).toBeGreaterThan(0);
      await page.getByLabel('unreleased in range').check();
      await poll(() => count('blocks')).toBe(expected);
      expect(hash().get('unrel')).toBe('1');
      // MindStudio's Unreleased Total / Max / Min Block, from the model's sizes of those allocations.
      const sizes = [...unreleasedIds(device, 10_000, 11_999)].map((id) => device.allocations.size[id]!);
      const exact = (n: number) => `${formatCount(n)} bytes`;
      const figures = [sizes.reduce((x, y) => x + y, 0), Math.max(...sizes), Math.min(...sizes)].map(exact);
      await poll(() =>
        page
          .getByLabel('blocks bytes')
          .locator('span[title]')
          .evaluateAll((s) => s.map((e) => e.title)),
      ).toEqual(figures);
      await page.getByLabel('unreleased in range').uncheck();
      await poll(() => count('blocks')).toBe(blocks.length);
    });

    it('a block row selects its allocation in the timeline details and pool state', async () => {
      await open('tab=blocks');
      // A block still allocated at the end, so the pool state after its alloc entry shows it.
      const id = selectRows(blocks, { filter: ['state=active_allocated', 'alloc_event>=0'] })[0]!;
      await setField('blocks address', `0x${device.allocations.addr[id]!.toString(16)}`);
      await poll(() => count('blocks')).toBe(
        selectRows(blocks, { filter: [`address=${device.allocations.addr[id]}`] }).length,
      );
      await table('blocks').locator(`tbody tr[data-id="${id}"]`).click();
      await poll(() => hash().get('alloc')).toBe(String(id));
      expect(hash().get('entry')).toBe(String(device.allocations.start[id]));
      await page.getByRole('tab', { name: /Timeline/ }).click();
      await page.getByRole('tab', { name: 'Blocks' }).click();
      await setField('blocks address', ''); // filters stay while the tab is away; clear for the next test
      await page.getByRole('tab', { name: /Timeline/ }).click();
      await poll(() => page.locator('aside.details[data-alloc]').getAttribute('data-alloc')).toBe(String(id));
      await poll(() =>
        page.locator(`section.pool button[data-alloc="${id}"]`).getAttribute('aria-pressed'),
      ).toBe('true');
    });

    it('a block picked in the pool state is the highlighted row of the Blocks table, scrolled into view', async () => {
      const last = device.trace.length - 1;
      await open(`tab=timeline&entry=${last}`);
      const blocksInPool = page.locator('section.pool button[data-alloc]');
      await poll(() => blocksInPool.count(), { timeout: 30_000 }).toBeGreaterThan(0);
      const target = blocksInPool.last();
      const id = await target.getAttribute('data-alloc');
      await target.click();
      await poll(() => hash().get('alloc')).toBe(id);
      await page.getByRole('tab', { name: 'Blocks' }).click();
      const row = table('blocks').locator(`tbody tr[data-id="${id}"]`);
      await poll(() => row.getAttribute('aria-selected'), { timeout: 10_000 }).toBe('true');
      await poll(() => inView(row)).toBe(true);
      await page.screenshot({ path: join(ARTIFACTS, 'blocks-selected.png') });
    });

    it('the Events table highlights the selected entry, and ↓ moves the selection to the next row', async () => {
      const entry = 12_345;
      await open(`tab=events&entry=${entry}`);
      const row = (k: number) => table('events').locator(`tbody tr[data-id="${k}"]`);
      await poll(() => row(entry).getAttribute('aria-selected'), { timeout: 30_000 }).toBe('true');
      await poll(() => inView(row(entry))).toBe(true);
      await page.locator('section.grid').focus();
      await page.keyboard.press('ArrowDown');
      await poll(() => hash().get('entry')).toBe(String(entry + 1));
      await poll(() => row(entry + 1).getAttribute('aria-selected')).toBe('true');
      const alloc = device.allocations.ofEntry[entry + 1]!;
      expect(hash().get('alloc')).toBe(alloc >= 0 ? String(alloc) : null);
    });

    it('the timeline shows one stream: the choice goes into the URL and a click picks that stream’s allocation', async () => {
      const s = loadSnapshotBytes(STREAMS_BYTES);
      const d = s.devices[0]!;
      const streams = deviceStreams(s, d);
      const chosen = streams[1]!;
      const v = streamView(s, d, chosen);
      await openFile(STREAMS_FILE, 'tab=timeline');
      await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
      const select = page.getByLabel('stream', { exact: true });
      expect(await select.locator('option').count()).toBe(streams.length + 1);
      await select.selectOption(String(chosen));
      await poll(() => hash().get('stream')).toBe(String(chosen));
      await page.waitForSelector('canvas[data-ready="true"]');
      // Click just above the baseline where this stream holds the most memory.
      let k = 0;
      for (let i = 1; i < d.trace.length; i++) if (v.totals.active[i]! > v.totals.active[k]!) k = i;
      const box = (await page.locator('canvas[aria-label="active memory timeline"]').boundingBox())!;
      const left = 64;
      const plotWidth = box.width - left - 8;
      await page.mouse.click(box.x + left + ((k + 0.5) / d.trace.length) * plotWidth, box.y + 18 + 280 - 3);
      await poll(() => hash().get('alloc')).not.toBeNull();
      expect(allocationStreams(s, d)[Number(hash().get('alloc'))]).toBe(chosen);
      await page.screenshot({ path: join(ARTIFACTS, 'timeline-stream.png') });
    });

    it('timeline search finds the allocations under a known frame and keeps the term in the URL', async () => {
      await open('tab=timeline');
      await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
      const frame = 'optimizer.py:80';
      // Independent of the search code: allocations whose stack has a frame at that file:line.
      const s = snapshot.stacks;
      let expected = 0;
      for (let id = 0; id < device.allocations.count; id++) {
        const frames = s.frames(device.allocations.stack[id]!);
        if (frames.some((f) => `${f.filename}:${f.line}`.endsWith(frame))) expected++;
      }
      expect(expected).toBeGreaterThan(0);
      await setField('search allocations by address or frame', frame);
      await poll(() => page.locator('output.search-result').getAttribute('data-count')).toBe(
        String(expected),
      );
      expect(hash().get('q')).toBe(frame);
      await page.screenshot({ path: join(ARTIFACTS, 'timeline-search.png') });
    });
  },
);
