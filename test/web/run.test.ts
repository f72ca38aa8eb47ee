import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { PLANTED_RUN, writeGeneratedRun } from '../helpers/generated-run.js';
import { CHROMIUM, CLI, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The Run page of `memlens view DIR` in headless Chromium, on a generated verl run with one rank
 * holding an extra buffer from step 3 on, one rank growing and one OOM dump: the page lands on
 * the run, its heatmap shows `memlens run --json`'s figures, a cell opens its snapshot, and two
 * shift-clicked cells are compared on one axis. Screenshots go to /tmp/shots/h8/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/h8';
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html'));
const MiB = 2 ** 20;

interface RunJson {
  runs: {
    snapshots: {
      file: string;
      step: number | null;
      rank: number | null;
      kind: string;
      devices: { allocated_bytes: number; trace_peak_allocated_bytes: number }[];
    }[];
  }[];
}

describe.skipIf(!ready && process.env.CI === undefined)('Run page in headless Chromium', () => {
  const work = mkdtempSync(join(tmpdir(), 'memlens-web-run-'));
  const root = join(work, 'run');
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  let expected: RunJson['runs'][number];

  beforeAll(async () => {
    writeGeneratedRun(root, PLANTED_RUN);
    mkdirSync(SHOTS, { recursive: true });
    // The CLI's answer first: the server then reopens the run from the same cache.
    process.env.XDG_CACHE_HOME = join(work, 'cache');
    const json = execFileSync(process.execPath, [...NODE_FLAGS, CLI, 'run', root, '--json'], {
      encoding: 'utf8',
      maxBuffer: 64 * MiB,
    });
    expected = (JSON.parse(json) as RunJson).runs[0]!;
    view = await startView(root);
    ({ browser, page } = await openBrowser());
    await page.goto(view.url);
    await page.waitForSelector('.heatmap .hm-cell', { timeout: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const hash = (): URLSearchParams => new URLSearchParams(new URL(page.url()).hash.slice(1));
  const cells = () =>
    page.$$eval('.heatmap .hm-cell', (els) =>
      // (Attributes, not dataset: this file is type-checked without the DOM library.)
      els.map((e) => {
        const step = e.getAttribute('data-step');
        return {
          rank: Number(e.getAttribute('data-rank')),
          step: step === '' ? null : Number(step),
          kind: e.getAttribute('data-kind')!,
          value: Number(e.getAttribute('data-value')),
          flagged: e.classList.contains('flagged'),
        };
      }),
    );
  const cell = (rank: number, step: number) =>
    page.locator(`.hm-cell[data-rank="${rank}"][data-step="${step}"]`);

  it('lands on the Run page; every heatmap cell is run --json’s figure of that snapshot', async () => {
    expect(hash().get('tab')).toBe('run');
    // In rank order, then the rank's windows, then its OOM dump (the heatmap's reading order).
    const order = (c: { rank: number | null; step: number | null }) => (c.rank ?? 0) * 1000 + (c.step ?? 999);
    const byCell = (figure: 'allocated_bytes' | 'trace_peak_allocated_bytes') =>
      expected.snapshots
        .map((s) => ({
          rank: s.rank,
          step: s.kind === 'oom' ? null : s.step,
          kind: s.kind,
          value: s.devices[0]![figure],
        }))
        .sort((a, b) => order(a) - order(b));
    const shown = await cells();
    expect(shown.map(({ flagged: _, ...c }) => c)).toEqual(byCell('allocated_bytes'));
    // The extra buffer: rank 1 from step 3 on, and nothing else, stands out at the dump.
    expect(shown.filter((c) => c.flagged).map((c) => [c.rank, c.step])).toEqual([
      [1, 3],
      [1, 4],
      [1, 5],
      [1, 6],
    ]);
    await page.screenshot({ path: join(SHOTS, 'run-allocated.png'), fullPage: true });

    await page.getByRole('button', { name: 'peak allocated in the window' }).click();
    await expect.poll(() => hash().get('fig')).toBe('peak_allocated');
    const peaks = (await cells()).map(({ flagged: _, ...c }) => c);
    expect(peaks).toEqual(byCell('trace_peak_allocated_bytes'));
    await page.screenshot({ path: join(SHOTS, 'run-peak.png'), fullPage: true });
    await page.getByRole('button', { name: 'allocated at the dump' }).click();
  });

  it('names the findings in words: the rank buffer, the growing site and the OOM', async () => {
    const text = await page.locator('.run-findings').textContent();
    expect(text).toMatch(
      /rank 1, steps 3–6: allocated at the dump [45]\d\d MiB above the median rank.*allocate_rank_buffer/,
    );
    expect(text).toMatch(/grows .* per step: rank 2 from step 1/);
    expect(text).toMatch(/rank 3 OOM after step 6/);
  });

  it('leads with the worst cell’s finding, rank 3’s OOM, whose link opens the dump on that OOM; report.html too', async () => {
    const lead = page.locator('.run-findings .run-worst');
    expect(await lead.textContent()).toMatch(
      /^Worst first: rank 3 OOM after step 6: exhaustion open its snapshot$/,
    );
    await page.screenshot({ path: join(SHOTS, 'run-worst-first.png') });
    await lead.getByRole('button', { name: 'open its snapshot' }).click();
    await expect.poll(() => hash().get('tab')).toBe('diagnosis');
    expect(hash().get('file')).toMatch(/torch_memory_oom_rank3_pid\d+\.pickle$/);
    await page.waitForSelector('main.diagnosis[aria-busy="false"] article.finding.lead', { timeout: 30_000 });
    expect(await page.locator('article.finding.lead').getAttribute('class')).toBe('finding oom lead');
    await page.getByRole('button', { name: '← back to the run' }).click();
    await page.waitForSelector('.heatmap .hm-cell');
    // The run's report page leads with the same finding.
    const report = join(work, 'run.html');
    execFileSync(process.execPath, [...NODE_FLAGS, CLI, 'report', root, '-o', report], { encoding: 'utf8' });
    const other = await browser.newPage();
    await other.goto(pathToFileURL(report).href);
    await other.waitForSelector('.run-findings .run-worst', { timeout: 60_000 });
    expect(await other.locator('.run-findings .run-worst').textContent()).toMatch(
      /^Worst first: rank 3 OOM after step 6: exhaustion/,
    );
    await other.screenshot({ path: join(SHOTS, 'run-report-worst-first.png') });
    await other.close();
  }, 120_000);

  it('a click on a cell opens that snapshot’s diagnosis, and the way back returns to the run', async () => {
    await cell(2, 4).click();
    await expect.poll(() => hash().get('tab')).toBe('diagnosis');
    expect(hash().get('file')).toBe(join('run', 'step4', 'torch_memory_rank2_pid40002.pickle'));
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'run-cell-opened.png') });
    await page.getByRole('button', { name: '← back to the run' }).click();
    await expect.poll(() => hash().get('tab')).toBe('run');
    await page.waitForSelector('.heatmap .hm-cell');
  });

  it('two shift-clicked cells are compared: both allocation curves on one axis, then the site diff', async () => {
    await cell(0, 4).click({ modifiers: ['Shift'] });
    await cell(1, 4).click({ modifiers: ['Shift'] });
    await expect
      .poll(() => hash().get('cmp'))
      .toBe(join('run', 'step4', 'torch_memory_rank1_pid40001.pickle'));
    expect(hash().get('file')).toBe(join('run', 'step4', 'torch_memory_rank0_pid40000.pickle'));
    const chart = page.getByRole('img', { name: 'allocated memory, A and B on one axis' });
    await chart.waitFor({ timeout: 30_000 });
    expect(await chart.getAttribute('data-axis')).toBe('time');
    for (const side of ['a', 'b']) {
      const points = Number(await chart.locator(`polyline.curve.${side}`).getAttribute('data-points'));
      expect(points).toBeGreaterThan(50);
    }
    // Aligned on each one's first step marker instead: both start at their ProfilerStep.
    await page.getByLabel('align').selectOption('step');
    await expect.poll(() => chart.getAttribute('data-align')).toBe('step');
    expect(Number(await chart.getAttribute('data-x0'))).toBeLessThanOrEqual(0);
    // The diff beside it leads with the planted buffer (B − A at the dump).
    const site = page.locator('.run-pair section[aria-label="live at dump time"] tr.site').first();
    await site.waitFor({ timeout: 30_000 });
    expect(await site.textContent()).toContain('allocate_rank_buffer');
    expect(Number(await site.locator('td[data-bytes]').getAttribute('data-bytes'))).toBe(512 * MiB);
    await page.getByRole('region', { name: 'compare two cells' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'run-compare.png'), fullPage: true });
  });

  it('draws 64 ranks × 100 steps at once (the server answer replaced by a run that large)', async () => {
    const ranks = 64;
    const steps = 100;
    const GiB = 2 ** 30;
    const rows = [];
    const snapshots = [];
    for (let s = 1; s <= steps; s++)
      for (let r = 0; r < ranks; r++) {
        const file = `big/step${s}/torch_memory_rank${r}_pid${r}.pickle`;
        const allocated = 2 * GiB + ((r * 7 + s * 13) % 17) * MiB + (r === 17 && s >= 60 ? GiB : 0);
        const figures = {
          allocated,
          peak_allocated: allocated + 3 * GiB,
          reserved: allocated + GiB,
          peak_reserved: allocated + 4 * GiB,
          non_releasable: 100 * MiB,
        };
        rows.push({
          file,
          kind: 'step',
          replica: null,
          rank: r,
          device: r,
          pid: r,
          steps: { first: s, last: s },
          lane: `:${r}:${r}:0`,
          lane_label: `rank ${r}`,
          column: String(s),
          figures,
          ooms: 0,
        });
        snapshots.push({
          file,
          step: s,
          last_step: s,
          rank: r,
          pid: r,
          replica: null,
          kind: 'step',
          tag: null,
          layout: 'verl',
          devices: [],
        });
      }
    const outlier = {
      axis: 'ranks',
      replica: null,
      rank: 17,
      device: 17,
      lane: ':17:17:0',
      lane_label: 'rank 17',
      figure: 'allocated',
      steps: { first: 60, last: 100 },
      value: 3 * GiB,
      expected: 2 * GiB,
      delta: GiB,
      max_delta: GiB,
      against_rank: 0,
      against_lane: 'rank 0',
      blame: [],
    };
    const body = JSON.stringify({
      version: 1,
      watching: false,
      progress: null,
      report: {
        root: 'big',
        layout: 'verl',
        snapshots,
        unplaced: [],
        layout_doubts: [],
        skipped: [],
        not_read: [],
        shared: [],
        rows,
        outliers: [outlier],
        growth: [],
        ooms: [],
      },
      names: snapshots.map((s) => s.file),
      urls: snapshots.map(() => 'files/0'),
    });
    await page.route('**/api/run*', (route) => route.fulfill({ contentType: 'application/json', body }));
    await page.goto('about:blank');
    const started = Date.now();
    await page.goto(`${view.url}#tab=run`);
    await expect.poll(() => page.locator('.hm-cell').count(), { timeout: 30_000 }).toBe(ranks * steps);
    const drawn = Date.now() - started;
    // A click is a discrete event: React renders it in a microtask, before the next task runs.
    const redrawn = (await page.evaluate(`new Promise((resolve) => {
      const button = [...document.querySelectorAll('.figure-choice button')].find((b) => b.textContent === 'reserved at the dump');
      const t = performance.now();
      button.click();
      setTimeout(() => resolve(performance.now() - t), 0);
    })`)) as number;
    expect(hash().get('fig')).toBe('reserved');
    expect(await page.locator('.hm-cell[data-rank="0"][data-step="1"]').getAttribute('data-value')).toBe(
      String(rows[0]!.figures.reserved),
    );
    await page.getByRole('button', { name: 'allocated at the dump' }).click();
    await page.screenshot({ path: join(SHOTS, 'run-64x100.png'), fullPage: false });
    process.stdout.write(
      `64 x 100 run: page drawn in ${drawn} ms, figure switched in ${redrawn.toFixed(0)} ms\n`,
    );
    expect(await page.locator('.hm-cell.flagged').count()).toBe(41);
    expect(drawn).toBeLessThan(10_000);
    expect(redrawn).toBeLessThan(1_000);
    await page.unroute('**/api/run*');
  }, 60_000);
});
