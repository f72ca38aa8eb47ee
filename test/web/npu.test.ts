import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npuSnapshotBytes } from '../../scripts/synth/npu.js';
import { loadSnapshotBytes } from '../../src/engine/load/index.js';
import { Action } from '../../src/engine/model/index.js';
import { CHROMIUM, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * A torch_npu file in the web app (headless Chromium): the device picker and the overview name
 * the device npu:N, and the diagnosis and overview speak the NPU's words, as the CLI does.
 */
const APP = join(import.meta.dirname, '..', '..', 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

describe.skipIf(!ready && process.env.CI === undefined)('a torch_npu file in the web app', () => {
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  let file = '';
  let oomFile = '';

  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), 'memlens-web-npu-')), 'oom_snapshot_7_20261128.pickle');
    writeFileSync(file, npuSnapshotBytes({ oom: 'cann', device: 1 }).bytes);
    // An allocator OOM (an oom entry, a fragmented pool), with workspace entries: every panel has something to say.
    oomFile = join(file, '..', 'allocator.pickle');
    writeFileSync(oomFile, npuSnapshotBytes({ oom: 'allocator', device: 1 }).bytes);
    view = await startView(file, oomFile);
    ({ browser, page } = await openBrowser());
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  it('names the device npu:1 and says nothing of CUDA', async () => {
    await page.goto(`${view.url}#file=${encodeURIComponent(file)}`);
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 30_000 });
    expect(await page.getByLabel('device').locator('option').allTextContents()).toEqual(['npu:1']);
    const diagnosis = (await page.locator('main.diagnosis').textContent()) ?? '';
    expect(diagnosis).toMatch(/no oom entry in the trace's 53 entries; .*CANN leaves none/);
    await page.getByRole('tab', { name: 'Overview' }).click();
    await page.waitForSelector('main.overview', { timeout: 30_000 });
    const overview = (await page.locator('main.overview').textContent()) ?? '';
    expect(overview).toContain('memory_summary, npu:1');
    expect(overview).toContain('not written (torch_npu writes none)');
    // What told the producer and the pad, as `summary` prints them.
    expect(overview).toMatch(
      /producer: torch_npu \(Ascend NPU\), from 1 workspace_snapshot trace entry; torch_npu frames/,
    );
    expect(overview).toMatch(/request pad: 32 B \(a \d+ B request holds a \d+ B block\)/);
    for (const text of [diagnosis, overview]) expect(text).not.toMatch(/\bCUDA\b|cudaMalloc|\bGPU\b|cuda:\d/);
  });

  /** Words of CUDA, PyTorch's CUDA API or its tools: wrong for a torch_npu file, wherever they show. */
  const CUDA_ONLY =
    /\bCUDA\b|cuda[A-Z]\w*|\bGPUs?\b|nvidia-smi|\bNCCL\b|cuBLAS|memory_viz|torch\.cuda|PYTORCH_CUDA|cuda:\d|\bdevice \d/;

  /** What the page shows: its text, the tooltips and the options of its pickers. */
  const shown = () =>
    page.evaluate<string>(`[
      document.body.innerText,
      ...[...document.querySelectorAll('[title]')].map((e) => e.getAttribute('title')),
      ...[...document.querySelectorAll('[placeholder]')].map((e) => e.getAttribute('placeholder')),
    ].join('\\n')`);

  /** The view once its answers are in: the same text twice, half a second apart, and nothing pending. */
  async function settled(): Promise<string> {
    let before = '';
    for (let i = 0; i < 60; i++) {
      await page.waitForTimeout(500);
      const now = await shown();
      const busy = await page.locator('[aria-busy="true"], .loading, [role="progressbar"]').count();
      if (now === before && busy === 0 && !/computing|loading|reading/i.test(now)) return now;
      before = now;
    }
    return before;
  }

  it('every tab and panel, with an OOM entry selected, says nothing only CUDA would say', async () => {
    const d = loadSnapshotBytes(npuSnapshotBytes({ oom: 'allocator', device: 1 }).bytes).devices[0]!;
    const oom = [...d.trace.action].indexOf(Action.oom);
    expect(oom).toBeGreaterThan(0);
    const views = [
      'tab=diagnosis',
      'tab=overview',
      `tab=timeline&entry=${oom}`,
      `tab=timeline&entry=${oom}&stack=segments`,
      `tab=timeline&entry=${oom}&stack=pools`,
      'tab=flame',
      ...['leaks', 'gc', 'frag', 'oom', 'categories', 'whatif', 'compare'].map(
        (p) => `tab=analyses&panel=${p}`,
      ),
      'tab=events',
      'tab=blocks',
    ];
    const said: string[] = [];
    for (const v of views) {
      await page.goto(`${view.url}#file=${encodeURIComponent(oomFile)}&${v}`);
      await page.waitForSelector('main', { timeout: 30_000 });
      const text = await settled();
      said.push(text);
      expect(text.match(CUDA_ONLY)?.[0], `${v}: ${text.slice(0, 3000)}`).toBeUndefined();
    }
    // The views did answer (an OOM's words, the NPU's memory calls), not only their frames.
    const all = said.join('\n');
    expect(all).toContain('npu:1');
    expect(all).toMatch(/aclrtMalloc/);
    expect(all).toMatch(/CANN/);
  }, 240_000);
});
