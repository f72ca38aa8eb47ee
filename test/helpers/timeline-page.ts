import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { openBrowser, type RunningView, startView } from './view-server.js';

/**
 * One e2e file's snapshot served by `memlens view` and one headless page on its timeline: the
 * server and browser start before the file's tests and stop after them.
 */
export function timelinePage(bytes: Uint8Array, artifacts: string) {
  const served = servedFiles({ 'snapshot.pickle': bytes }, [], artifacts);
  const page = () => served.page();
  return {
    page,
    /** The app's state in the URL hash. */
    hash: (): URLSearchParams => new URLSearchParams(new URL(page().url()).hash.slice(1)),
    /** The timeline's pointer target, which carries what the plot shows as data- attributes. */
    plot: () => page().getByLabel('active memory timeline'),
    /** Opens the timeline tab afresh with more hash parameters, once its first layer is drawn. */
    open: async (extra: string) => {
      const file = encodeURIComponent(served.file('snapshot.pickle'));
      await page().goto('about:blank');
      await page().goto(`${served.url()}#file=${file}&tab=timeline${extra}`);
      await page().waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
    },
  };
}

/**
 * Snapshots written to a temporary folder (by name) and files already on disk, served together by
 * `memlens view`, with one headless page: started before the file's tests, stopped after them.
 */
export function servedFiles(written: Record<string, Uint8Array>, onDisk: string[], artifacts: string) {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const file = (name: string) => join(dir, name);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-served-'));
    mkdirSync(artifacts, { recursive: true });
    for (const [name, bytes] of Object.entries(written)) writeFileSync(file(name), bytes);
    view = await startView(...Object.keys(written).map(file), ...onDisk);
    ({ browser, page } = await openBrowser());
  });
  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });
  return { page: () => page, url: () => view.url, file };
}
