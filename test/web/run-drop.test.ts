import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRun } from '../../scripts/synth/run.js';
import { cellResult } from '../../src/engine/analyses/run/cell-result.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { CHROMIUM, openBrowser } from '../helpers/view-server.js';

/**
 * Several snapshot files dropped together on the static page (file://, no server): the page
 * decodes them one by one in its worker and shows the same Run page, computed by the engine there.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);
const SHOTS = '/tmp/shots/h8';
const MiB = 2 ** 20;
const CORPUS = join(ROOT, '..', 'shared', 'corpus');

describe.skipIf(!ready && process.env.CI === undefined)('files dropped together make a Run page', () => {
  // composer names carry rank and batch in the file name itself: a drop keeps names, not folders.
  const files = generateRun({
    ranks: 3,
    windows: 3,
    seed: 12,
    layout: 'composer',
    extraBuffer: { rank: 2, bytes: 256 * MiB, step: 2 },
  });
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ({ browser, page } = await openBrowser());
  });
  afterAll(() => browser?.close());

  /** Drops the files on the page together, as a person drags them from a folder. */
  const drop = async (list: { name: string; bytes: Uint8Array }[]) => {
    const payload = list.map((f) => ({ name: f.name, b64: Buffer.from(f.bytes).toString('base64') }));
    // The page's DataTransfer and File (this file is type-checked without the DOM library).
    type PageGlobals = {
      DataTransfer: new () => { items: { add(f: unknown): void } };
      File: new (parts: Uint8Array[], name: string) => unknown;
    };
    const transfer = await page.evaluateHandle((list) => {
      const { DataTransfer, File } = globalThis as unknown as PageGlobals;
      const dt = new DataTransfer();
      for (const f of list) {
        const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], f.name));
      }
      return dt;
    }, payload);
    await page.dispatchEvent('body', 'drop', { dataTransfer: transfer });
  };

  it('decodes each dropped file in the worker and draws the run with its figures', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(APP).href);
    await drop(files.map((f) => ({ name: f.path.split('/').pop()!, bytes: f.bytes })));
    await expect.poll(() => page.locator('.hm-cell').count(), { timeout: 60_000 }).toBe(files.length);
    for (const f of files) {
      const expected = cellResult(loadSnapshotBytes(f.bytes)).devices[0]!.allocated_bytes;
      const cell = page.locator(`.hm-cell[data-rank="${f.rank}"][data-step="${f.steps[1]}"]`);
      expect(Number(await cell.getAttribute('data-value'))).toBe(expected);
    }
    expect(await page.locator('.hm-cell.flagged').count()).toBeGreaterThan(0);
    expect(await page.locator('.run-findings').textContent()).toMatch(
      /rank 2, steps? 2.*allocate_rank_buffer/,
    );
    await page.screenshot({ path: join(SHOTS, 'run-dropped.png'), fullPage: true });

    // A cell opens its dropped file.
    await page.locator('.hm-cell[data-rank="1"][data-step="3"]').click();
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 30_000 });
    expect(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('file')).toBe(
      'rank1.3.memory_snapshot.pickle',
    );
    expect(errors).toEqual([]);
  }, 90_000);

  it('two shift-clicked dropped cells are compared with the site diff, as served ones are', async () => {
    await page.goto(pathToFileURL(APP).href);
    // Dragged from composer's folder: its Chrome traces and a config come along, and are left out.
    const text = (s: string) => new TextEncoder().encode(s);
    await drop([
      ...files.map((f) => ({ name: f.path.split('/').pop()!, bytes: f.bytes })),
      { name: 'rank0.2.pt.trace.json', bytes: text('{"schemaVersion": 1, "traceEvents": []}') },
      { name: 'training_config.json', bytes: text('{"lr": 0.0001}') },
    ]);
    const cell = (rank: number) => page.locator(`.hm-cell[data-rank="${rank}"][data-step="2"]`);
    await cell(0).waitFor({ timeout: 60_000 });
    await cell(0).click({ modifiers: ['Shift'] });
    await cell(2).click({ modifiers: ['Shift'] });
    // B − A at the dump leads with the buffer planted on rank 2 at step 2.
    const site = page.locator('.run-pair section[aria-label="live at dump time"] tr.site').first();
    await site.waitFor({ timeout: 60_000 });
    expect(await site.textContent()).toContain('allocate_rank_buffer');
    expect(Number(await site.locator('td[data-bytes]').getAttribute('data-bytes'))).toBe(256 * MiB);
    expect(await page.locator('.run-page details.hint summary').textContent()).toBe(
      '2 other files skipped: not snapshots',
    );
    expect(await page.locator('.run-page .error').count()).toBe(0);
    await page.getByRole('region', { name: 'compare two cells' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'run-dropped-compare.png'), fullPage: true });
  }, 90_000);

  it('corpus files of one job without steps in their names: one cell per rank, and says what cannot be compared', async () => {
    const names = [
      'THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle',
      'THUDM_slime__scripts_0804_3_shapshot_init_model__dc9e311.pickle',
    ];
    const corpus = names.map((name) => ({ name, bytes: readFileSync(join(CORPUS, name)) }));
    await page.goto('about:blank');
    await page.goto(pathToFileURL(APP).href);
    await drop(corpus);
    await expect.poll(() => page.locator('.hm-cell').count(), { timeout: 60_000 }).toBe(2);
    expect(await page.locator('.run-page h1').textContent()).toMatch(/2 ranks, 2 dumps without a step/);
    expect(await page.locator('.run-findings').textContent()).toMatch(/^Nothing to compare yet/);
    const shown = await page.$$eval('.hm-cell', (els) =>
      els.map((e) => Number(e.getAttribute('data-value'))),
    );
    const expected = corpus.flatMap((f) =>
      cellResult(loadSnapshotBytes(f.bytes)).devices.map((d) => d.allocated_bytes),
    );
    expect(shown.sort()).toEqual(expected.sort());
    await page.screenshot({ path: join(SHOTS, 'run-dropped-corpus.png') });
  }, 90_000);

  /** A run PyTorch recorded (fixtures/layout/README.md), dropped by its files' names. */
  const recorded = (folder: string, count: number) =>
    Array.from({ length: count }, (_, i) => {
      const name = `snapshot_${i}.pickle.gz`;
      return { name, bytes: readFileSync(join(ROOT, 'fixtures', 'layout', folder, name)) };
    });

  it("says 'not certain' where Megatron-Bridge's snapshot_<rank> may be one process's steps; a loop's dumps are its steps", async () => {
    await page.goto('about:blank');
    await page.goto(pathToFileURL(APP).href);
    await drop(recorded('ranks', 2));
    await expect.poll(() => page.locator('.hm-cell').count(), { timeout: 60_000 }).toBe(2);
    expect(await page.locator('.run-page .layout-doubt').textContent()).toMatch(
      /^not certain: snapshot_0\.pickle\.gz … snapshot_1\.pickle\.gz are read as Megatron-Bridge's ranks 0-1/,
    );
    await page.screenshot({ path: join(SHOTS, 'run-dropped-not-certain.png') });

    await page.goto('about:blank');
    await page.goto(pathToFileURL(APP).href);
    await drop(recorded('loop', 4));
    await expect.poll(() => page.locator('.hm-cell').count(), { timeout: 60_000 }).toBe(4);
    expect(await page.locator('.run-page h1').textContent()).toMatch(/1 rank × 4 step windows/);
    expect(await page.locator('.run-page .layout-doubt').count()).toBe(0);
  }, 90_000);
});
