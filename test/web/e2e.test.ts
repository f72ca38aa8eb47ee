import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { formatBytes } from '../../src/engine/base/format.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { poolStateAfter } from '../../src/engine/views/pools/pool-state.js';
import { segmentPieces } from '../../src/engine/views/pools/segment-timeline.js';
import { DENSE_BLOCKS } from '../../web/src/views/pool-dense.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The web app end to end: `memlens view` serving corpus and generated snapshots to Debian's
 * Chromium, driven by playwright-core. Screenshots of each view go to test-artifacts/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CORPUS = join(ROOT, '..', 'shared', 'corpus');
const CORPUS_FILE = 'Wedsonlin_assignment2__results_medium_128_training_memory_snapshot__87b0864.pickle';
const ARTIFACTS = join(ROOT, 'test-artifacts');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP) && existsSync(join(CORPUS, CORPUS_FILE));

// In CI (.ci/run installs Chromium) a missing browser or build is a failure, not a skip.
describe.skipIf(!ready && process.env.CI === undefined)('web app in headless Chromium', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const outside: string[] = [];
  const generated = generateSnapshotBytes({ events: 4000, seed: 11 });
  const bad = new Uint8Array([0x80, 0x04, 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x7d, 0x94, 0x8c]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-web-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(dir, 'generated.pickle'), generated.bytes);
    writeFileSync(join(dir, 'truncated.pickle'), bad);
    writeFileSync(join(dir, 'larger.pickle'), generateSnapshotBytes({ events: 60_000, seed: 12 }).bytes);
    view = await startView(
      join(CORPUS, CORPUS_FILE),
      join(dir, 'generated.pickle'),
      join(dir, 'truncated.pickle'),
      join(dir, 'larger.pickle'),
    );
    ({ browser, page } = await openBrowser());
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith(`${view.origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'))
        outside.push(url);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  const hash = (): URLSearchParams => new URLSearchParams(new URL(page.url()).hash.slice(1));
  const timelineReady = () => page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
  const openFile = async (name: string, extra = '') => {
    // Through about:blank: a hash-only goto does not reload the app, and a reload can race the old
    // app rewriting its own hash from a state update still in flight.
    await page.goto('about:blank');
    // The app opens on the Diagnosis tab; these tests start on the timeline unless the link says otherwise.
    const tab = extra.includes('tab=') ? '' : '&tab=timeline';
    await page.goto(`${view.url}#file=${encodeURIComponent(name)}${tab}${extra}`);
    await timelineReady();
  };

  it('loads a corpus file and the overview shows its memory_summary figures', async () => {
    await openFile(join(CORPUS, CORPUS_FILE));
    const expected = JSON.parse(readFileSync(join(CORPUS, 'expected', `${CORPUS_FILE}.json`), 'utf8')) as {
      devices: { reserved_bytes: number; segments: number }[];
    };
    await page.getByRole('tab', { name: 'Overview' }).click();
    const reservedRow = page.locator('table.summary tr', { hasText: 'GPU reserved memory' }).first();
    await expect
      .poll(() => reservedRow.locator('td').nth(2).textContent())
      .toBe(formatBytes(expected.devices[0]!.reserved_bytes));
    expect(await reservedRow.locator('td').nth(2).getAttribute('title')).toBe(
      `${expected.devices[0]!.reserved_bytes.toLocaleString('en-US')} bytes`,
    );
    await page.screenshot({ path: join(ARTIFACTS, 'overview.png'), fullPage: true });
    // The page's CSP lets the worker compile the WebAssembly entry scanner, and it read the trace.
    const done = page.locator('.load-done');
    await expect.poll(() => done.textContent()).toMatch(/read in \d+\.\d s/);
    expect(Number(await done.getAttribute('data-scanned-entries'))).toBeGreaterThan(1000);
    await page.getByRole('tab', { name: /Timeline/ }).click();
    await timelineReady();
    await page.screenshot({ path: join(ARTIFACTS, 'timeline.png') });
  });

  it('a click on the timeline pins an allocation live then, and pool state selects the same block', async () => {
    const canvas = page.getByLabel('active memory timeline');
    const box = (await canvas.boundingBox())!;
    // Low in the plot, mid-trace: inside the stack at any moment of a training run.
    await page.mouse.click(box.x + box.width * 0.5, box.y + box.height - 40);
    await expect.poll(() => page.getByLabel('allocation details').getAttribute('data-alloc')).not.toBeNull();
    const alloc = Number(await page.getByLabel('allocation details').getAttribute('data-alloc'));
    const entry = Number(hash().get('entry'));
    expect(Number(hash().get('alloc'))).toBe(alloc);
    // Independently of the page: the engine in Node says that allocation is live after that entry.
    const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, CORPUS_FILE))));
    expect([...s.devices[0]!.live.aliveAfter(entry)]).toContain(alloc);
    const block = page.locator(`.pool button[data-alloc="${alloc}"]`);
    await expect.poll(() => block.getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => page.getByLabel('pool state').getAttribute('data-entry')).toBe(String(entry));
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-selected.png') });
    await page.getByLabel('pool state').screenshot({ path: join(ARTIFACTS, 'pool-state.png') });
  });

  it('a click on a pool block pins that allocation; arrow keys step entries', async () => {
    const other = page.locator('.pool button[aria-pressed="false"]').first();
    const alloc = await other.getAttribute('data-alloc');
    await other.click();
    await expect.poll(() => page.getByLabel('allocation details').getAttribute('data-alloc')).toBe(alloc);
    const entry = Number(hash().get('entry'));
    await page.locator('body').press('ArrowLeft');
    await expect.poll(() => hash().get('entry')).toBe(String(entry - 1));
    await expect.poll(() => page.getByLabel('pool state').getAttribute('data-entry')).toBe(String(entry - 1));
  });

  it('wheel zoom narrows the window; the URL round-trips through a reload', async () => {
    const canvas = page.getByLabel('active memory timeline');
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
    await page.mouse.wheel(0, -600);
    await expect.poll(() => hash().get('x0')).not.toBeNull();
    await timelineReady();
    const before = page.url();
    const alloc = await page.getByLabel('allocation details').getAttribute('data-alloc');
    await page.reload();
    await timelineReady();
    expect(page.url()).toBe(before);
    await expect.poll(() => page.getByLabel('allocation details').getAttribute('data-alloc')).toBe(alloc);
    await expect
      .poll(() => page.getByLabel('pool state').getAttribute('data-entry'))
      .toBe(hash().get('entry'));
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-zoomed.png') });
  });

  it('a drag across the minimap sets the window to the dragged span', async () => {
    const mini = page.getByLabel(/^minimap/);
    const box = (await mini.boundingBox())!;
    const plotLeft = box.x + 64; // the timeline's left margin (draw.ts MARGIN.left)
    const plotWidth = box.width - 64 - 8;
    await page.mouse.move(plotLeft + plotWidth * 0.2, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(plotLeft + plotWidth * 0.3, box.y + 20, { steps: 4 });
    await page.mouse.move(plotLeft + plotWidth * 0.4, box.y + 20, { steps: 4 });
    await page.mouse.up();
    const entries = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, CORPUS_FILE)))).devices[0]!
      .trace.length;
    // The URL follows the window once the gesture settles.
    await expect.poll(() => Number(hash().get('x0')) / entries).toBeCloseTo(0.2, 1);
    await expect.poll(() => Number(hash().get('x1')) / entries).toBeCloseTo(0.4, 1);
    await timelineReady();
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-minimap.png') });
  });

  it('the focused plot zooms and pans from the keyboard: 0 whole trace, W halves, D pans a fifth, S doubles', async () => {
    const plot = page.getByLabel('active memory timeline');
    const drawn = async () => (await plot.getAttribute('data-window'))!.split(':').map(Number);
    const n = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, CORPUS_FILE)))).devices[0]!.trace
      .length;
    await plot.focus();
    await plot.press('0');
    await expect.poll(drawn).toEqual([0, n]);
    await plot.press('w');
    await expect.poll(drawn).toEqual([n / 4, (3 * n) / 4]);
    await plot.press('d');
    await expect.poll(drawn).toEqual([n / 4 + n / 10, (3 * n) / 4 + n / 10]);
    await plot.press('s');
    // Doubled around its middle, then kept inside the trace.
    await expect.poll(drawn).toEqual([0, n]);
    await timelineReady();
  });

  it('the segment timeline stacks reserved memory; a click outlines the segment under it in the pool state', async () => {
    await openFile(join(dir, 'generated.pickle'), '&tab=timeline&stack=segments');
    const plot = page.getByLabel('active memory timeline');
    const box = (await plot.boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.5, box.y + box.height - 40);
    await expect.poll(() => hash().get('seg')).not.toBeNull();
    const address = Number(hash().get('seg'));
    const entry = Number(hash().get('entry'));
    // Independently of the page: a piece of reserved memory at that address is live after that entry.
    const s = loadSnapshotBytes(generated.bytes);
    const p = segmentPieces(s, s.devices[0]!);
    const live = [...p.address.keys()].filter(
      (id) => p.address[id] === address && p.start[id]! <= entry && entry < p.end[id]!,
    );
    expect(live.length).toBe(1);
    await expect.poll(() => page.getByLabel('pool state').getAttribute('data-entry')).toBe(String(entry));
    const focused = page.locator('.segment.focused');
    await expect.poll(() => focused.count()).toBe(1);
    const base = Number(await focused.getAttribute('data-address'));
    expect(base).toBeLessThanOrEqual(address);
    expect(hash().get('stack')).toBe('segments');
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-segments.png') });
    await page.getByRole('radio', { name: 'allocations', exact: true }).check();
    await expect.poll(() => hash().get('stack')).toBeNull();
  });

  it('a generated snapshot chosen from the file list shows its planted figures, on the time axis too', async () => {
    await page.getByLabel('file', { exact: true }).selectOption({ label: join(dir, 'generated.pickle') });
    await timelineReady();
    // The switch converts the window in the worker first, so the URL follows a moment later.
    await page.getByLabel('wall time').click();
    await expect.poll(() => hash().get('axis')).toBe('time');
    await timelineReady();
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-generated-time.png') });
    await page.getByRole('tab', { name: 'Overview' }).click();
    const row = page.locator('table.summary tr', { hasText: 'GPU reserved memory' }).first();
    await expect
      .poll(() => row.locator('td').nth(2).textContent())
      .toBe(formatBytes(generated.expected.devices[0]!.reserved_bytes));
  });

  it('switching the x axis keeps the window; a link pasted into the same tab restores its view', async () => {
    const t = loadSnapshotBytes(generated.bytes).devices[0]!.trace;
    const n = t.length;
    await openFile(join(dir, 'generated.pickle'), '&axis=entry&x0=1000&x1=1400');
    await page.getByLabel('wall time').click();
    await expect.poll(() => hash().get('axis')).toBe('time');
    await timelineReady();
    // The generator's times never fall: entry 1000 starts at its own time_us (to the microsecond).
    expect(Number(hash().get('x0'))).toBe(t.timeUs[1000]);
    expect(Number(hash().get('x1'))).toBe(t.timeUs[1400]);
    await page.getByLabel('trace entry').click();
    await expect.poll(() => hash().get('axis')).toBe('entry');
    // Back: entries recorded in the same microsecond share a position, so the window may start
    // at the first of those; it starts at the same time.
    for (const [k, at] of [
      ['x0', 1000],
      ['x1', 1400],
    ] as const) {
      const back = Number(hash().get(k));
      expect(back).toBeLessThanOrEqual(at);
      expect(t.timeUs[Math.floor(back)]).toBe(t.timeUs[at]);
    }
    await timelineReady();
    // Only the hash changes: no reload, the app follows the hashchange.
    const entry = Math.floor(n / 3);
    const link = `file=${encodeURIComponent(join(dir, 'generated.pickle'))}&tab=timeline&axis=entry&entry=${entry}&x0=10&x1=90`;
    await page.evaluate(`location.hash = ${JSON.stringify(link)}`);
    await expect.poll(() => page.getByLabel('pool state').getAttribute('data-entry')).toBe(String(entry));
    await expect
      .poll(() => page.getByLabel('active memory timeline').getAttribute('data-window'))
      .toBe('10:90');
  });

  it('a segment of more than DENSE_BLOCKS blocks is one canvas; a click on it pins the block under the pointer', async () => {
    const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, CORPUS_FILE))));
    const d = s.devices[0]!;
    // Where to look: a moment whose pool has such a segment (the model's pool state), and a block in it.
    const entry = 9568;
    const seg = poolStateAfter(s, d, entry).segments.find((x) => x.blocks.length > DENSE_BLOCKS)!;
    const block = seg.blocks.reduce((a, b) => (b.size > a.size ? b : a));
    await openFile(join(CORPUS, CORPUS_FILE), `&entry=${entry}&seg=${seg.address}`);
    const row = page.locator(`.segment[data-address="${seg.address}"]`);
    const bar = row.locator('canvas.dense-bar');
    await expect.poll(() => bar.count()).toBe(1);
    expect(await row.locator('button').count()).toBe(0);
    const box = (await bar.boundingBox())!;
    const at = block.address + block.size / 2;
    await page.mouse.click(box.x + ((at - seg.address) / seg.size) * box.width, box.y + box.height / 2);
    await expect.poll(() => hash().get('alloc')).not.toBeNull();
    // Independently of the pool view: the pinned allocation's bytes (the model's columns) hold that address.
    const id = Number(hash().get('alloc'));
    expect(d.allocations.addr[id]!).toBeLessThanOrEqual(at);
    expect(d.allocations.addr[id]! + d.allocations.size[id]!).toBeGreaterThan(at);
    // The pinned block is a button on top of the canvas, as in any other segment.
    await expect
      .poll(() => row.locator(`button[data-alloc="${id}"]`).getAttribute('aria-pressed'))
      .toBe('true');
    await page.getByLabel('pool state').screenshot({ path: join(ARTIFACTS, 'pool-dense-segment.png') });
  });

  it('loading shows the bytes decoded as it goes', async () => {
    const name = join(dir, 'larger.pickle');
    const size = readFileSync(name).length;
    // Record every text the status line shows while the file loads.
    // (A string: this file is type-checked without the DOM library.)
    await page.evaluate(`(() => {
      const seen = (window.seen = []);
      new MutationObserver(() => {
        const t = document.querySelector('[role="status"]')?.textContent;
        if (t && seen[seen.length - 1] !== t) seen.push(t);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    await page.getByLabel('file', { exact: true }).selectOption({ label: name });
    await page.getByRole('tab', { name: /Timeline/ }).click();
    await timelineReady();
    const seen = (await page.evaluate('window.seen')) as string[];
    const total = formatBytes(size);
    const partial = seen.filter((t) => t.startsWith(`decoding ${name}: `) && t.endsWith(` of ${total}`));
    expect(partial.length, seen.join('\n')).toBeGreaterThan(0);
  });

  it("a bad file shows the engine's one-line error in the page", async () => {
    let message = '';
    try {
      loadSnapshotBytes(bad);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).not.toBe('');
    await page.getByLabel('file', { exact: true }).selectOption({ label: join(dir, 'truncated.pickle') });
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toBe(`${join(dir, 'truncated.pickle')}: ${message}`);
    await page.screenshot({ path: join(ARTIFACTS, 'error.png') });
  });

  it('made no request outside 127.0.0.1', () => {
    expect(outside).toEqual([]);
  });

  it('the static build opens from file:// and reads a dropped-in file in its worker', async () => {
    const local = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const errors: string[] = [];
    local.on('pageerror', (e) => errors.push(e.message));
    await local.goto(pathToFileURL(APP).href);
    await local.getByLabel('open a snapshot file').setInputFiles(join(dir, 'generated.pickle'));
    await local.getByRole('tab', { name: /Timeline/ }).click();
    await local.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
    await local.screenshot({ path: join(ARTIFACTS, 'file-protocol.png') });
    expect(Number(await local.locator('.load-done').getAttribute('data-scanned-entries'))).toBeGreaterThan(
      1000,
    );
    expect(errors).toEqual([]);
    await local.close();
  });
});
