import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { awaitableCycle, type CycleRun, writeCycleFiles, writeCycleRun } from '../helpers/cycle-files.js';
import { CHROMIUM, CLI, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The Cycles page of `memlens view DIR` in headless Chromium, on a recorded run (two verl windows
 * of a training loop whose reference cycles gc.collect() frees, and a cycle file per collection):
 * the tab appears, each cycle is listed with its bytes and path in words, the chosen one's graph
 * is drawn (boxes, labelled references, the tensor with its size), and its tensor's links open the
 * window's snapshot on the allocation `memlens cycles --json` names and on its GC burst's frees.
 * Screenshots go to /tmp/shots/cycles/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/cycles';
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html'));

interface Listed {
  file: string;
  bytes: number;
  path_words: string;
  snapshot: { file: string } | null;
  tensors: {
    allocation: { id: number; alloc_entry: number } | null;
    burst: { entry: number; last_entry: number } | null;
  }[];
}

describe.skipIf(!ready && process.env.CI === undefined)('Cycles page in headless Chromium', () => {
  const work = mkdtempSync(join(tmpdir(), 'memlens-web-cycles-'));
  const root = join(work, 'run');
  let recorded: CycleRun;
  let listed: Listed[];
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  /** How the page names a file of the run: from the run directory's name on. */
  const shown = (p: string) => join(basename(root), relative(root, p));

  beforeAll(async () => {
    recorded = writeCycleRun(root);
    mkdirSync(SHOTS, { recursive: true });
    process.env.XDG_CACHE_HOME = join(work, 'cache');
    const json = execFileSync(process.execPath, [...NODE_FLAGS, CLI, 'cycles', root, '--json'], {
      encoding: 'utf8',
    });
    listed = (JSON.parse(json) as { cycles: Listed[] }).cycles;
    view = await startView(root);
    ({ browser, page } = await openBrowser());
    await page.goto(view.url);
    await page.getByRole('tab', { name: 'Cycles' }).click();
    await page.waitForSelector('.cycle-list button', { timeout: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('lists every cycle with its bytes and path in words, and draws the chosen one’s graph', async () => {
    const items = page.locator('.cycle-list button');
    expect(await items.count()).toBe(listed.length);
    const c = recorded.cycles[1]!;
    const item = page.locator(`.cycle-list button[data-cycle="${shown(c.path)}"]`);
    await item.click();
    expect(await item.textContent()).toContain('AwaitableTensor.value → Tensor 2.00 MiB');
    expect(await item.textContent()).toContain('2.00 MiB');
    const graph = page.locator('.cycle-graph svg');
    expect(await graph.locator('[data-node]').count()).toBe(5);
    const tensor = graph.locator('.node.tensor');
    expect(await tensor.count()).toBe(1);
    expect(await tensor.textContent()).toContain('2.00 MiB');
    const labels = await graph.locator('.edge text').allTextContents();
    expect(labels.sort()).toEqual(['[0]', '__self__', 'callbacks', 'fn', 'value'].sort());
    expect(await graph.locator('.edge.on-cycle').count()).toBe(4);
    // Boxes are apart: no two nodes' rectangles overlap on the page.
    const boxes = await graph
      .locator('[data-node] rect')
      .evaluateAll((rs) =>
        rs.map((r) => ['x', 'y', 'width', 'height'].map((k) => Number(r.getAttribute(k)))),
      );
    for (const [i, a] of boxes.entries())
      for (const b of boxes.slice(i + 1))
        expect(
          a[0]! + a[2]! <= b[0]! ||
            b[0]! + b[2]! <= a[0]! ||
            a[1]! + a[3]! <= b[1]! ||
            b[1]! + b[3]! <= a[1]!,
        ).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'cycles-page.png'), fullPage: true });
  });

  it("a tensor's allocation link opens the window's snapshot with that allocation selected", async () => {
    const c = recorded.cycles[1]!;
    const expected = listed.find((x) => x.file === c.path)!;
    const a = expected.tensors[0]!.allocation!;
    await page.locator(`[data-alloc="${a.id}"]`).click();
    await page.waitForSelector(`aside.details[data-alloc="${a.id}"]`, { timeout: 60_000 });
    const hash = new URLSearchParams((await page.evaluate<string>('location.hash')).slice(1));
    expect(hash.get('file')).toBe(shown(expected.snapshot!.file));
    expect(hash.get('tab')).toBe('timeline');
    expect(hash.get('alloc')).toBe(String(a.id));
    expect(hash.get('entry')).toBe(String(a.alloc_entry));
    await page.screenshot({ path: join(SHOTS, 'cycles-allocation.png') });
  });

  it("that snapshot's Diagnosis cites the recorded cycle its largest GC burst freed", async () => {
    await page.getByRole('tab', { name: 'Diagnosis' }).click();
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 30_000 });
    await page.waitForFunction(
      "document.querySelector('main.diagnosis')?.textContent.includes('recorded cycle (rank 0, collection 1)')",
      undefined,
      { timeout: 30_000 },
    );
    const text = await page.locator('main.diagnosis').textContent();
    expect(text).toContain(
      'recorded cycle (rank 0, collection 1): AwaitableTensor.value → Tensor 2.00 MiB; freed here: 1 tensor, 2.00 MiB',
    );
    await page.screenshot({ path: join(SHOTS, 'cycles-diagnosis.png') });
  });

  it("that snapshot's GC panel names the recorded cycle each burst freed", async () => {
    await page.getByRole('tab', { name: 'Analyses' }).click();
    await page.getByRole('tab', { name: 'GC bursts' }).click();
    await page.waitForSelector('.recorded-cycles', { timeout: 30_000 });
    const cited = await page.locator('.recorded-cycles').allTextContents();
    expect(cited).toEqual([
      'recorded cycle (rank 0, collection 1): AwaitableTensor.value → Tensor 2.00 MiB; freed here: 1 tensor, 2.00 MiB',
      'recorded cycle (rank 0, collection 2): AwaitableTensor.value → Tensor 2.00 MiB; freed here: 1 tensor, 2.00 MiB',
    ]);
    await page.screenshot({ path: join(SHOTS, 'cycles-gc-panel.png'), fullPage: true });
  });

  it('its GC burst link opens the Events table on the burst’s frees', async () => {
    await page.getByRole('tab', { name: 'Cycles' }).click();
    const c = recorded.cycles[2]!;
    const expected = listed.find((x) => x.file === c.path)!;
    await page.locator(`.cycle-list button[data-cycle="${shown(c.path)}"]`).click();
    const b = expected.tensors[0]!.burst!;
    await page.locator(`[data-burst="${b.entry}"]`).click();
    await page.waitForFunction("new URLSearchParams(location.hash.slice(1)).get('tab') === 'events'");
    const hash = new URLSearchParams((await page.evaluate<string>('location.hash')).slice(1));
    expect(hash.get('file')).toBe(shown(expected.snapshot!.file));
    const filter = [...hash.values()].join(' ');
    expect(filter).toContain(String(b.entry));
    expect(filter).toContain(String(b.last_entry));
    await page.screenshot({ path: join(SHOTS, 'cycles-burst.png') });
  });
});

describe.skipIf(!ready && process.env.CI === undefined)('a run recorded without a GPU: cycles alone', () => {
  const work = mkdtempSync(join(tmpdir(), 'memlens-web-cycles-cpu-'));
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  afterAll(async () => {
    await browser?.close();
    await view?.stop();
    rmSync(work, { recursive: true, force: true });
  });
  it('memlens view serves it and the page lands on the Cycles tab', async () => {
    writeCycleFiles(work, [
      awaitableCycle({ time_us: 1_700_000_000_000_000, step: 3, device: 'cpu' }, [
        { bytes: 1024, data_ptr: 4096, device: 'cpu' },
      ]),
    ]);
    view = await startView(work);
    ({ browser, page } = await openBrowser());
    await page.goto(view.url);
    await page.waitForSelector('.cycle-list button', { timeout: 60_000 });
    expect(await page.getByRole('tab', { name: 'Cycles' }).getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('.cycle-detail').textContent()).toContain('no CUDA tensor');
    await page.screenshot({ path: join(SHOTS, 'cycles-cpu-only.png') });
  }, 120_000);
});
