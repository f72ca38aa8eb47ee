import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { formatFrame } from '../../src/engine/derived/frames/short-path.js';
import { topUserFrame } from '../../src/engine/derived/frames/user-frames.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { Action } from '../../src/engine/model/trace-columns.js';
import { orderSegments, poolStateAfter } from '../../src/engine/views/pools/pool-state.js';
import { BLACK, layerPixels, MAGENTA, OOM_RED } from '../helpers/layer-pixels.js';
import { servedFiles } from '../helpers/timeline-page.js';
import { CHROMIUM } from '../helpers/view-server.js';

/**
 * What the screenshots of the timeline page showed wrong, end to end in headless Chromium: the
 * hover, the pinned allocation's mark, a file without a trace, the pool state's widths, order and
 * private pools, step labels, the fragmentation panel, times, and the OOM's marks. Screenshots go
 * to test-artifacts/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const CORPUS = join(ROOT, '..', 'shared', 'corpus');
/** A corpus file whose 24 annotations (nccl collectives) crowd into a few pixels on the time axis. */
const CROWDED = 'THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle';
const ready = existsSync(CHROMIUM) && existsSync(APP) && existsSync(join(CORPUS, CROWDED));

/** What the probes read of a canvas (the tests are type-checked without the DOM's types). */
interface ProbedCanvas {
  width: number;
  height: number;
  dataset: Record<string, string | undefined>;
  getBoundingClientRect(): { left: number; top: number; width: number; height: number };
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  } | null;
}

describe.skipIf(!ready && process.env.CI === undefined)('timeline page fixes seen in screenshots', () => {
  const oomBytes = generateSnapshotBytes({
    events: 6000,
    seed: 3,
    oomCause: 'exhaustion',
    privatePool: true,
  }).bytes;
  const s = loadSnapshotBytes(oomBytes);
  const d = s.devices[0]!;
  const n = d.trace.length;
  const dumpOnlyBytes = generateSnapshotBytes({ events: 2000, seed: 4, legacy: 'list' }).bytes;
  const served = servedFiles(
    { 'oom.pickle': oomBytes, 'dump-only.pickle': dumpOnlyBytes },
    [join(CORPUS, CROWDED)],
    ARTIFACTS,
  );
  const file = served.file;
  let page: Page;
  beforeAll(() => {
    page = served.page();
  });

  const hash = () => new URLSearchParams(new URL(page.url()).hash.slice(1));
  const plot = () => page.getByLabel('active memory timeline');
  const hover = async () => (await page.locator('.hover').textContent()) ?? '';
  const open = async (path: string, extra: string, waitForPlot = true) => {
    await page.goto('about:blank');
    await page.goto(`${served.url()}#file=${encodeURIComponent(path)}${extra}`);
    if (waitForPlot) await page.waitForSelector('canvas[data-ready="true"]', { timeout: 30_000 });
  };
  /** Digits of a raw epoch time (µs since 1970: 16 digits) or any 10-digit plain number. */
  const rawNumber = /(?<![\w.,])\d{10,}/;

  const pixels = (
    kind: 'black' | 'magenta' | 'oom',
    around?: { x: number; y: number; dx: number; dy: number },
  ) => layerPixels(page, kind === 'black' ? BLACK : kind === 'magenta' ? MAGENTA : OOM_RED, around);

  it('the hover names the allocation by size and user frame, at a time since the trace start', async () => {
    // Short of the OOM's huge request, so the y axis fits the training steps.
    await open(file('oom.pickle'), `&tab=timeline&x0=0&x1=${n - 200}`);
    const box = (await plot().boundingBox())!;
    const x = box.x + box.width * 0.4;
    let alloc = -1;
    let at = 0;
    for (let y = box.y + box.height - 23; y > box.y + 20 && alloc < 0; y -= 2) {
      await page.mouse.move(x, y);
      const m = /allocation #(\d+): /.exec(await hover());
      if (m) [alloc, at] = [Number(m[1]), y];
    }
    expect(alloc).toBeGreaterThanOrEqual(0);
    const top = topUserFrame(s.stacks.frames(d.allocations.stack[alloc]!))!;
    await expect.poll(hover, { timeout: 10_000 }).toContain(` from ${formatFrame(top)}`);
    expect(await hover()).toContain(`${top.filename.split('/').pop()}:${top.line})`);
    const text = await hover();
    expect(text).toMatch(/^after entry [\d,]+ at [\d.]+ (µs|ms|s|min): /);
    expect(text).not.toMatch(rawNumber);
    // Back on the same allocation after leaving it: what the worker said is shown at once.
    await page.mouse.move(x, box.y + box.height - 5);
    await page.mouse.move(x, at);
    expect(await hover()).toContain(` from ${formatFrame(top)}`);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-hover-frame.png') });
  });

  it('the pinned allocation is outlined, not filled black, in the timeline and the pool state', async () => {
    // The largest allocation that lives 20 entries (short of the OOM), in its middle, the window
    // around its lifetime: wide and tall enough to show its inside.
    const a = d.allocations;
    let alloc = -1;
    for (let id = 0; id < a.count; id++)
      if (
        a.start[id]! >= 0 &&
        a.end[id]! - a.start[id]! > 20 &&
        a.end[id]! < n - 200 &&
        (alloc < 0 || a.size[id]! > a.size[alloc]!)
      )
        alloc = id;
    const k = Math.floor((a.start[alloc]! + a.end[alloc]!) / 2);
    await open(
      file('oom.pickle'),
      `&tab=timeline&entry=${k}&alloc=${alloc}&x0=${a.start[alloc]! - 30}&x1=${a.end[alloc]! + 30}`,
    );
    await expect.poll(() => plot().getAttribute('data-selection')).toMatch(new RegExp(`^${alloc}:`));
    const [, y0, y1] = (await plot().getAttribute('data-selection'))!.split(':').map(Number);
    const layer = (await page.locator('.plot-moving canvas').boundingBox())!;
    const [w0, w1] = (await plot().getAttribute('data-window'))!.split(':').map(Number);
    const yTop = Number(await plot().getAttribute('data-y-axis-top'));
    const x = layer.x + ((k + 0.5 - w0!) / (w1! - w0!)) * layer.width;
    const yOf = (b: number) => layer.y + layer.height - (b / yTop) * layer.height;
    expect(yOf(y0!) - yOf(y1!)).toBeGreaterThan(12);
    // Its outline is black; inside it the allocation's own colour still shows.
    await expect
      .poll(async () => (await pixels('black', { x, y: yOf(y1!), dx: 8, dy: 4 })).length)
      .toBeGreaterThan(0);
    expect(await pixels('black', { x, y: (yOf(y0!) + yOf(y1!)) / 2, dx: 3, dy: 3 })).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-pinned-outline.png') });
    const block = page.locator(`.pool .b[data-alloc="${alloc}"]`).first();
    await block.waitFor({ timeout: 10_000 });
    const style = await block.evaluate((b) => {
      const view = globalThis as unknown as {
        getComputedStyle(e: unknown): { backgroundColor: string; outlineStyle: string };
      };
      const c = view.getComputedStyle(b);
      return { background: c.backgroundColor, outline: c.outlineStyle };
    });
    expect(style.background).toBe('rgb(78, 121, 167)');
    expect(style.outline).toBe('solid');
  });

  it('a file without a trace says so and shows the dump, with no entry -1 and no float ticks', async () => {
    await open(file('dump-only.pickle'), '&tab=timeline', false);
    await page.getByText('dump only: no trace recorded').waitFor({ timeout: 30_000 });
    const dump = loadSnapshotBytes(dumpOnlyBytes);
    const segments = poolStateAfter(dump, dump.devices[0]!, -1).segments.length;
    expect(segments).toBeGreaterThan(0);
    await expect.poll(() => page.locator('.pool').getAttribute('data-segments')).toBe(String(segments));
    const text = await page.locator('main').innerText();
    expect(text).toContain('Pool state at dump time');
    expect(text).not.toContain('entry -1');
    expect(text).not.toMatch(/\d\.\d{6,}/);
    expect(await page.locator('canvas[aria-label="active memory timeline"]').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-dump-only.png') });
  });

  it('the pool state sizes bars by bytes, lists the largest free gap first and marks private pools', async () => {
    // Mid-trace: segments of many sizes (at the end the OOM's huge segment dwarfs every other).
    const k = Math.floor(n / 2);
    await open(file('oom.pickle'), `&tab=timeline&entry=${k}`);
    const expected = poolStateAfter(s, d, k);
    const rows = page.locator('.pool .segment');
    await rows.first().waitFor({ timeout: 10_000 });
    await page.getByLabel('segment order').selectOption('gap');
    await page.getByLabel('segment bar widths').selectOption('bytes');
    const byGap = orderSegments(expected.segments, 'gap');
    await expect.poll(() => rows.first().getAttribute('data-address')).toBe(String(byGap[0]!.address));
    // The rows' bars in proportion to their segments' bytes (those wide enough to measure).
    const bars = await rows.evaluateAll((els) =>
      els.map((e) => {
        const el = e as unknown as {
          dataset: Record<string, string>;
          querySelector(q: string): { getBoundingClientRect(): { width: number } };
        };
        return {
          address: Number(el.dataset.address),
          width: el.querySelector('.seg-bar').getBoundingClientRect().width,
        };
      }),
    );
    const sizeOf = (address: number) => expected.segments.find((g) => g.address === address)!.size;
    const measured = bars.filter((b) => b.width > 20);
    const sizes = new Set(measured.map((b) => sizeOf(b.address)));
    expect(sizes.size).toBeGreaterThan(1);
    const [first] = measured;
    for (const b of measured)
      expect(b.width / first!.width).toBeCloseTo(sizeOf(b.address) / sizeOf(first!.address), 1);
    // Private pools: the dump's segments with a segment_pool_id other than (0, 0).
    const pooled = expected.segments.filter((g) => g.private_pool !== null);
    expect(pooled.length).toBeGreaterThan(0);
    await page.getByLabel('segment order').selectOption('address');
    await expect.poll(() => page.locator('.pool .segment.private').count()).toBeGreaterThan(0);
    const shown = await page
      .locator('.pool .segment[data-private-pool]')
      .evaluateAll((els) =>
        els.map((e) => (e as unknown as { dataset: Record<string, string> }).dataset.address),
      );
    for (const a of shown) expect(pooled.map((g) => String(g.address))).toContain(a);
    await page.locator('.pool').screenshot({ path: join(ARTIFACTS, 'pool-state-private-by-bytes.png') });
  });

  it('search matches are magenta over a dimmed layer', async () => {
    // The file of the largest allocation's user frame: a term with matches on screen.
    const a = d.allocations;
    let big = 0;
    for (let id = 0; id < a.count; id++) if (a.stack[id]! >= 0 && a.size[id]! > a.size[big]!) big = id;
    const term = topUserFrame(s.stacks.frames(a.stack[big]!))!.filename.split('/').pop()!;
    await open(file('oom.pickle'), '&tab=timeline');
    expect(await pixels('magenta')).toEqual([]);
    await open(file('oom.pickle'), `&tab=timeline&q=${encodeURIComponent(term)}`);
    await expect.poll(async () => (await pixels('magenta')).length, { timeout: 10_000 }).toBeGreaterThan(10);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-search-magenta.png') });
  });

  it('step labels never overlap and no marker line runs through one', async () => {
    await open(join(CORPUS, CROWDED), '&tab=timeline&axis=time');
    const labels = page.locator('.plot-clip > canvas');
    await expect.poll(() => labels.getAttribute('data-labels'), { timeout: 10_000 }).not.toBe('');
    const probe = await labels.evaluate((canvas) => {
      const c = canvas as unknown as ProbedCanvas;
      const sx = c.width / c.getBoundingClientRect().width;
      const boxes = (c.dataset.labels ?? '')
        .split(' ')
        .map((b) => b.split(':').map(Number) as [number, number]);
      const g = c.getContext('2d')!;
      // The share of each label's backing that is opaque (lines under it hidden).
      const opaque = boxes.map(([x0, x1]) => {
        const w = Math.max(1, Math.floor((x1 - x0) * sx) - 2);
        const data = g.getImageData(Math.ceil(x0 * sx) + 1, 1, w, Math.floor(10 * sx)).data;
        let solid = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i]! >= 200) solid++;
        return solid / (data.length / 4);
      });
      return { boxes, opaque };
    });
    expect(probe.boxes.length).toBeGreaterThan(0);
    const sorted = [...probe.boxes].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]![0]).toBeGreaterThanOrEqual(sorted[i - 1]![1]);
    for (const share of probe.opaque) expect(share).toBeGreaterThan(0.95);
    await page.screenshot({
      path: join(ARTIFACTS, 'timeline-step-labels.png'),
      clip: { x: 0, y: 100, width: 700, height: 320 },
    });
  });

  it('the Fragmentation panel prints the dump state once when the selected entry is the last', async () => {
    await open(file('oom.pickle'), '&tab=analyses&panel=frag', false);
    const states = page.locator('section[aria-label="fragmentation"] .frag-state');
    await states.first().waitFor({ timeout: 30_000 });
    expect(await states.count()).toBe(1);
    expect(await states.first().locator('h4').textContent()).toContain(`the same as after trace entry`);
    // An earlier entry is a different state: both are printed.
    await open(file('oom.pickle'), `&tab=analyses&panel=frag&entry=${Math.floor(n / 3)}`, false);
    await states.first().waitFor({ timeout: 30_000 });
    await expect.poll(() => states.count()).toBe(2);
  });

  it('marks the OOM on the timeline and the minimap; a click on either selects the OOM entry', async () => {
    const ooms = [...Array(n).keys()].filter((k) => d.trace.action[k] === Action.oom);
    expect(ooms.length).toBeGreaterThan(0);
    const oom = ooms[0]!;
    // A window around the OOM and an entry elsewhere selected.
    const w0 = Math.max(0, oom - 400);
    await open(file('oom.pickle'), `&tab=timeline&entry=10&x0=${w0}&x1=${Math.min(n, oom + 400)}`);
    expect((await pixels('oom')).length).toBeGreaterThan(20);
    const layer = (await page.locator('.plot-moving canvas').boundingBox())!;
    const [x0, x1] = (await plot().getAttribute('data-window'))!.split(':').map(Number);
    const x = layer.x + ((oom + 0.5 - x0!) / (x1! - x0!)) * layer.width;
    await page.mouse.click(x + 2, layer.y + layer.height / 2);
    await expect.poll(() => hash().get('entry')).toBe(String(oom));
    await expect.poll(() => page.locator('.pool .event').textContent()).toMatch(/^oom requested/);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-oom-marked.png') });
    // Its label, at the plot's top right on the whole trace (the OOM is the last entries').
    await open(file('oom.pickle'), '&tab=timeline&entry=10');
    const whole = (await page.locator('.plot-moving canvas').boundingBox())!;
    await page.mouse.click(whole.x + whole.width - 12, whole.y + 7);
    await expect.poll(() => hash().get('entry')).toBe(String(oom));
    // The minimap, on the whole trace: its mark, and a click on it.
    await open(file('oom.pickle'), '&tab=timeline&entry=10&x0=0&x1=500');
    const minimap = page.getByLabel('minimap: drag to choose the timeline window');
    await expect.poll(() => minimap.getAttribute('data-ooms')).toMatch(new RegExp(`^${oom}@\\d+`));
    const px = Number((await minimap.getAttribute('data-ooms'))!.split(' ')[0]!.split('@')[1]);
    const mbox = (await minimap.boundingBox())!;
    await page.mouse.click(mbox.x + px - 1, mbox.y + mbox.height / 2);
    await expect.poll(() => hash().get('entry')).toBe(String(oom));
    const [v0, v1] = (await plot().getAttribute('data-window'))!.split(':').map(Number);
    expect(oom).toBeGreaterThanOrEqual(v0!);
    expect(oom).toBeLessThanOrEqual(v1!);
  });

  it('the Events table shows times since the trace start, raw time_us only in the title', async () => {
    await open(file('oom.pickle'), '&tab=events', false);
    const cells = page.locator('td.col-time_us');
    await cells.first().waitFor({ timeout: 30_000 });
    const texts = await cells.allTextContents();
    expect(texts.length).toBeGreaterThan(5);
    for (const t of texts) expect(t).toMatch(/^[\d.]+ (µs|ms|s|min)$/);
    expect(await cells.first().getAttribute('title')).toMatch(/^time_us \d+$/);
  });

  it('times on the page count from the trace start: no raw epoch µs', async () => {
    await open(file('oom.pickle'), `&tab=timeline&axis=time&entry=${Math.floor(n / 2)}`);
    await expect.poll(() => page.locator('.pool .event').textContent()).toMatch(/into the trace/);
    const box = (await plot().boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height - 30);
    await expect.poll(hover).toMatch(/ at [\d.]+ (µs|ms|s|min)/);
    expect(await page.locator('main').innerText()).not.toMatch(rawNumber);
    expect(await hover()).not.toMatch(rawNumber);
  });
});
