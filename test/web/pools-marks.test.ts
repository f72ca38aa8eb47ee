import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { allocationStreams } from '../../src/engine/analyses/summary/stream-view.js';
import { formatStream } from '../../src/engine/base/format.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { Action } from '../../src/engine/model/trace-columns.js';
import { BLACK, layerPixels, MAGENTA } from '../helpers/layer-pixels.js';
import { timelinePage } from '../helpers/timeline-page.js';
import { CHROMIUM } from '../helpers/view-server.js';

/**
 * The pools stack honours the app's selection, the timeline search and the stream filter, end to
 * end in headless Chromium on a generated snapshot with two side streams and a private pool
 * (CUDA graph capture). Marks are checked on the layer canvas's pixels: the pinned allocation's
 * cursor box is outlined pure black, search matches are magenta.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

describe.skipIf(!ready && process.env.CI === undefined)(
  'pools stack: selection, search, stream filter',
  () => {
    const generated = generateSnapshotBytes({ events: 6000, seed: 7, streams: 2, privatePool: true });
    const s = loadSnapshotBytes(generated.bytes);
    const d = s.devices[0]!;
    const app = timelinePage(generated.bytes, ARTIFACTS);
    const { hash, plot } = app;
    const open = (extra: string) => app.open(`&stack=pools${extra}`);
    let page: Page;
    beforeAll(() => {
      page = app.page();
    });
    const hover = () => page.locator('.hover').textContent();

    const pixels = (kind: 'black' | 'wash', around?: { x: number; y: number; dx: number; dy: number }) =>
      layerPixels(page, kind === 'black' ? BLACK : MAGENTA, around);

    /** The first point, from the top down along x, whose hover names one allocation. */
    const singleAllocationAt = async (x: number): Promise<{ y: number; alloc: number }> => {
      const box = (await plot().boundingBox())!;
      for (let y = box.y + 24; y < box.y + box.height - 24; y += 4) {
        await page.mouse.move(x, y);
        const m = /allocation #(\d+): /.exec((await hover()) ?? '');
        if (m) return { y, alloc: Number(m[1]) };
      }
      throw new Error('no allocation found under the pointer');
    };

    it('outlines the pinned allocation where it sits in its pool envelope', async () => {
      await open('');
      const box = (await plot().boundingBox())!;
      const x = box.x + box.width * 0.6;
      // The highest allocation drawn there.
      const { y, alloc } = await singleAllocationAt(x);
      expect(await pixels('black', { x, y, dx: 8, dy: 3 })).toEqual([]);
      await page.mouse.click(x, y);
      await expect.poll(() => hash().get('alloc')).toBe(String(alloc));
      // The pinned allocation's bytes in the stack drawn hold the bytes under the point clicked.
      const layer = (await page.locator('.plot-moving canvas').boundingBox())!;
      const yTop = Number(await plot().getAttribute('data-y-axis-top'));
      const clicked = ((layer.y + layer.height - y) / layer.height) * yTop;
      await expect.poll(() => plot().getAttribute('data-selection')).toMatch(new RegExp(`^${alloc}:`));
      const [, y0, y1] = (await plot().getAttribute('data-selection'))!.split(':').map(Number);
      expect(clicked).toBeGreaterThanOrEqual(y0!);
      expect(clicked).toBeLessThan(y1!);
      // The cursor box marks them at the selected entry: at the point clicked.
      await expect
        .poll(async () => (await pixels('black', { x, y, dx: 8, dy: 3 })).length, { timeout: 10_000 })
        .toBeGreaterThan(0);
      await page.screenshot({ path: join(ARTIFACTS, 'timeline-pools-pinned.png') });
    });

    it('places a pinned private-pool allocation above the default pool envelopes, as planted', async () => {
      // The planted graph pool: its dump segments, made at their segment_alloc and kept to the dump.
      const pooled = s.tables.segments.filter((g) => g.poolId[0] !== 0 || g.poolId[1] !== 0);
      const t = d.trace;
      const madeAt = pooled.map((g) => {
        let at = -1;
        for (let k = 0; k < t.length; k++)
          if (t.action[k] === Action.segment_alloc && t.addr[k] === g.address) at = k;
        return at;
      });
      const a = d.allocations;
      const inPool = (id: number) =>
        pooled.some((g) => a.addr[id]! >= g.address && a.addr[id]! < g.address + g.totalSize);
      // A captured allocation freed before the dump, pinned right after it is made.
      let alloc = -1;
      for (let id = 0; id < a.count && alloc < 0; id++)
        if (inPool(id) && a.start[id]! >= 0 && a.end[id]! < t.length) alloc = id;
      expect(alloc).toBeGreaterThanOrEqual(0);
      const k = a.start[alloc]!;
      // Under it: every default-pool envelope (all reserved bytes but the graph pool's), then the
      // graph pool's live allocations made before it.
      let y0 = d.totals.reserved[k]!;
      pooled.forEach((g, i) => {
        if (madeAt[i]! <= k) y0 -= g.totalSize;
      });
      for (const id of d.live.aliveAfter(k)) if (inPool(id) && a.start[id]! < k) y0 += a.size[id]!;
      const y1 = y0 + a.size[alloc]!;

      await open(`&entry=${k}&alloc=${alloc}`);
      await expect.poll(() => plot().getAttribute('data-selection')).toBe(`${alloc}:${y0}:${y1}`);
      // The cursor box is drawn there, at the selected entry.
      const layer = (await page.locator('.plot-moving canvas').boundingBox())!;
      const [w0, w1] = (await plot().getAttribute('data-window'))!.split(':').map(Number);
      const yTop = Number(await plot().getAttribute('data-y-axis-top'));
      const x = layer.x + ((k + 0.5 - w0!) / (w1! - w0!)) * layer.width;
      const y = layer.y + layer.height - ((y0 + y1) / 2 / yTop) * layer.height;
      expect((await pixels('black', { x, y, dx: 6, dy: 2 })).length).toBeGreaterThan(0);
    });

    it("washes the search matches: the optimizer's state, where its envelope holds it", async () => {
      // The planted Adam state: large, long-lived allocations (the graph-matched ones are under a pixel tall).
      const term = 'adam.py';
      // Independent of the search code: allocations whose stack has a frame in that file.
      const matched = (id: number) =>
        s.stacks.frames(d.allocations.stack[id]!).some((f) => f.filename.endsWith(term));
      let planted = 0;
      for (let id = 0; id < d.allocations.count; id++) if (matched(id)) planted++;
      expect(planted).toBeGreaterThan(0);

      await open('');
      const before = (await pixels('wash')).length;
      await open(`&q=${term}`);
      await expect
        .poll(async () => (await pixels('wash')).length, { timeout: 10_000 })
        .toBeGreaterThan(before + 50);
      await page.screenshot({ path: join(ARTIFACTS, 'timeline-pools-search.png') });
      // A washed run names a matching allocation (merged runs under a pixel tall are skipped).
      const washed = await pixels('wash');
      let named = 0;
      for (let i = 0; i < washed.length && named < 3; i += Math.max(1, Math.floor(washed.length / 40))) {
        await page.mouse.move(washed[i]!.x, washed[i]!.y);
        const m = /allocation #(\d+): /.exec((await hover()) ?? '');
        if (!m) continue;
        expect(matched(Number(m[1]))).toBe(true);
        named++;
      }
      expect(named).toBeGreaterThan(0);
    });

    it("keeps only the filtered stream's envelopes: its groups, its reserved bytes, its allocations", async () => {
      // The planted private pool's stream (a side stream), from its dump segments.
      const pooled = s.tables.segments.filter((g) => g.poolId[0] !== 0 || g.poolId[1] !== 0);
      expect(pooled.length).toBeGreaterThan(0);
      const stream = pooled[0]!.stream;
      // Independent of the model's totals: that stream's reserved bytes from its segment events.
      const t = d.trace;
      const streamOf = (k: number) => s.traceColumns.streams[t.stream[k]!]!;
      let reserved = 0;
      let top = 0;
      let deviceReserved = 0;
      let deviceTop = 0;
      for (let k = 0; k < t.length; k++) {
        const a = t.action[k];
        const sign =
          a === Action.segment_alloc || a === Action.segment_map
            ? 1
            : a === Action.segment_free || a === Action.segment_unmap
              ? -1
              : 0;
        if (sign === 0) continue;
        deviceReserved += sign * t.size[k]!;
        deviceTop = Math.max(deviceTop, deviceReserved);
        if (streamOf(k) !== stream) continue;
        reserved += sign * t.size[k]!;
        top = Math.max(top, reserved);
      }
      expect(top).toBeLessThan(deviceTop);

      await open(`&stream=${stream}`);
      const legend = page.getByLabel('pools legend');
      await expect.poll(() => legend.locator('li[data-shown="true"]').count()).toBeGreaterThan(0);
      for (const text of await legend.locator('li[data-shown="true"]').allTextContents())
        expect(text.endsWith(`stream ${formatStream(stream)}`)).toBe(true);
      expect(await legend.locator('li[data-shown="true"]', { hasText: 'private pool' }).count()).toBe(1);
      expect(await legend.locator('li[data-shown="false"]').count()).toBeGreaterThan(0);
      await expect.poll(async () => Number(await plot().getAttribute('data-y-top'))).toBe(top);
      await page.screenshot({ path: join(ARTIFACTS, 'timeline-pools-stream.png') });

      // A click picks an allocation of that stream from the stack as drawn.
      const box = (await plot().boundingBox())!;
      const x = box.x + box.width * 0.6;
      const { y } = await singleAllocationAt(x);
      await page.mouse.click(x, y);
      await expect.poll(() => hash().get('alloc')).not.toBeNull();
      expect(allocationStreams(s, d)[Number(hash().get('alloc'))]).toBe(stream);
      // The segments stack is the device's reserved memory: the filter says it does not apply.
      await page.getByRole('radio', { name: 'segments' }).check();
      await expect.poll(() => page.getByLabel('stream').isDisabled()).toBe(true);
    });
  },
);
