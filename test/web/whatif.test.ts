import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { formatBytes, formatCount } from '../../src/engine/base/format.js';
import type { ReplaySummary } from '../../src/engine/simulate/replay-summary.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { CHROMIUM, CLI, openBrowser, type RunningView, startView } from '../helpers/view-server.js';

/**
 * The What-if and Compare panels in headless Chromium: an OOM planted by fragmentation that
 * expandable segments avoid (the page must say what `memlens simulate --json` says), a settings
 * string the parser refuses, and two ranks that differ by one planted buffer.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);
const MiB = 2 ** 20;

function cli(...args: string[]): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

interface SimJson {
  files: {
    devices: { recorded: ReplaySummary; what_if: ReplaySummary | null; sweep: ReplaySummary[] | null }[];
  }[];
}

describe.skipIf(!ready && process.env.CI === undefined)('what-if and compare in headless Chromium', () => {
  let dir = '';
  let view: RunningView;
  let browser: Browser;
  let page: Page;
  const rank = { events: 3000, seed: 83, streams: 1 };
  const extra = 96 * MiB;
  const rankB = generateSnapshotBytes({ ...rank, extraBuffer: extra });
  const planted = rankB.expected.extra_buffer!;
  const file = (name: string) => join(dir, name);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-web-whatif-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(
      file('oom.pickle'),
      generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes,
    );
    writeFileSync(file('rank0.pickle'), generateSnapshotBytes(rank).bytes);
    writeFileSync(file('rank1.pickle'), rankB.bytes);
    writeFileSync(
      file('truncated.pickle'),
      new Uint8Array([0x80, 0x04, 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x7d, 0x94, 0x8c]),
    );
    view = await startView(
      file('oom.pickle'),
      file('rank0.pickle'),
      file('rank1.pickle'),
      file('truncated.pickle'),
    );
    ({ browser, page } = await openBrowser());
  });

  afterAll(async () => {
    await browser?.close();
    await view?.stop();
  });

  const hash = (): URLSearchParams => new URLSearchParams(new URL(page.url()).hash.slice(1));
  const open = async (name: string, rest: string) => {
    await page.goto(`${view.url}#file=${encodeURIComponent(file(name))}&tab=analyses&${rest}`);
    await page.reload(); // a hash-only goto does not reload the app
  };
  const settings = () => page.getByLabel('settings to try');
  const table = () => page.locator('section[aria-label="what-if"] .what-if table.panel-table');
  const cell = (row: string, column: number) =>
    table()
      .locator('tr', { has: page.locator('th', { hasText: new RegExp(`^${row}$`) }) })
      .locator('td')
      .nth(column);

  it('expandable segments avoid the planted fragmentation OOM, as memlens simulate says', async () => {
    const set = 'expandable_segments:True';
    const r = cli('simulate', file('oom.pickle'), '--set', set, '--json');
    expect(r.status).toBe(0);
    const sim = (JSON.parse(r.stdout) as SimJson).files[0]!.devices[0]!;
    expect([sim.recorded.oom, sim.what_if!.oom]).toEqual([true, false]);

    await open('oom.pickle', 'panel=whatif');
    await settings().fill(set);
    await page.getByRole('button', { name: 'simulate' }).click();
    await expect
      .poll(() => table().locator('thead th').allTextContents())
      .toEqual(['', 'recorded settings', 'what if']);
    expect(await cell('settings', 1).textContent()).toBe(set);
    expect(await cell('OOM', 0).getAttribute('data-oom')).toBe('true');
    expect(await cell('OOM', 0).textContent()).toBe(
      `yes, ${sim.recorded.ooms} (first at entry ${formatCount(sim.recorded.first_oom_entry)} of ${formatCount(sim.recorded.trace_entries)})`,
    );
    expect(await cell('OOM', 1).textContent()).toBe(
      `no: all ${formatCount(sim.what_if!.trace_entries)} entries`,
    );
    for (const [row, f] of [
      ['peak reserved', (x: ReplaySummary) => x.peak_reserved_completed_bytes],
      ['peak allocated', (x: ReplaySummary) => x.peak_allocated_bytes],
    ] as const) {
      expect(await cell(row, 0).textContent()).toBe(formatBytes(f(sim.recorded)));
      expect(await cell(row, 1).textContent()).toBe(formatBytes(f(sim.what_if!)));
    }
    // Fragmentation is measured where it answers the question, and the panel says where.
    expect(await cell('fragmentation at the allocated peak', 1).textContent()).toBe(
      `${formatBytes(sim.what_if!.fragmentation_at_peak_bytes)} (${sim.what_if!.fragmentation_at_peak_percent}%)`,
    );
    expect(await cell('fragmentation at the OOM', 0).textContent()).toBe(
      formatBytes(sim.recorded.fragmentation_at_oom_bytes!),
    );
    expect(await page.locator('section[aria-label="what-if"] .what-if').textContent()).toContain(
      'reserved − allocated when allocated memory peaked',
    );
    expect(await cell('cudaMalloc / cudaFree', 1).textContent()).toBe(
      `${formatCount(sim.what_if!.cuda_malloc_calls)} / ${formatCount(sim.what_if!.cuda_free_calls)}`,
    );
    expect(hash().get('set')).toBe(set);
    await page.screenshot({ path: join(ARTIFACTS, 'whatif.png'), fullPage: true });
  });

  it('the sweep ranks as memlens simulate --sweep and is no longer busy when done', async () => {
    const r = cli('simulate', file('oom.pickle'), '--sweep', '--json');
    const sweep = (JSON.parse(r.stdout) as SimJson).files[0]!.devices[0]!.sweep!;
    await page.getByRole('button', { name: 'sweep' }).click();
    const rows = page.locator('.sweep table.panel-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(sweep.length);
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => tr.children[1]!.textContent));
    expect(shown).toEqual(sweep.map((s) => s.settings || '(defaults)'));
    const reached = await rows.evaluateAll((trs) => trs.map((tr) => tr.children[2]!.textContent));
    expect(reached).toEqual(
      sweep.map((s) =>
        s.oom
          ? `OOM at ${formatCount(s.first_oom_entry)} of ${formatCount(s.trace_entries)}`
          : `all ${formatCount(s.trace_entries)}`,
      ),
    );
    expect(await page.locator('.sweep').getAttribute('aria-busy')).toBe('false');
    await page.screenshot({ path: join(ARTIFACTS, 'whatif-sweep.png'), fullPage: true });
  });

  it('a settings string the parser refuses shows the CLI error and runs nothing', async () => {
    const bad = 'expandable_segments:maybe';
    const r = cli('simulate', file('oom.pickle'), '--set', bad);
    expect(r.status).toBe(2);
    const message = r.stderr.trim().replace(/^memlens: /, '');
    expect(message).toMatch(/expandable_segments/);
    await settings().fill(bad);
    await expect
      .poll(() => page.locator('section[aria-label="what-if"] [role="alert"]').textContent())
      .toBe(message);
    expect(await page.getByRole('button', { name: 'simulate' }).isDisabled()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'whatif-bad-set.png') });
  });

  it('compare of two ranks names the planted buffer first with its bytes', async () => {
    await open('rank0.pickle', 'panel=compare');
    await page.getByLabel('file to compare', { exact: true }).selectOption(file('rank1.pickle'));
    const dump = page.locator('section[aria-label="live at dump time"]');
    const first = dump.locator('tr.site').first();
    await first.waitFor({ timeout: 20_000 });
    expect(await first.locator('td').nth(2).getAttribute('data-bytes')).toBe(String(planted.bytes));
    expect(await first.locator('td').nth(2).textContent()).toBe(`+${formatBytes(planted.bytes)}`);
    expect(await first.locator('.frames li').first().textContent()).toContain(`${planted.site.name} (`);
    expect(await first.locator('.frames li').first().getAttribute('title')).toBe(
      `${planted.site.filename}:${planted.site.line}`,
    );
    expect(hash().get('cmp')).toBe(file('rank1.pickle'));
    await page.screenshot({ path: join(ARTIFACTS, 'compare.png'), fullPage: true });
    // The link restores the comparison.
    await page.reload();
    await first.waitFor({ timeout: 20_000 });
    expect(await first.locator('td').nth(2).getAttribute('data-bytes')).toBe(String(planted.bytes));
  });

  it('a B that cannot be read shows the one-line error of memlens diff', async () => {
    const r = cli('diff', file('rank0.pickle'), file('truncated.pickle'));
    expect(r.status).toBe(2);
    await page.getByLabel('file to compare', { exact: true }).selectOption(file('truncated.pickle'));
    const alert = page.locator('section[aria-label="compare"] [role="alert"]');
    await expect
      .poll(() => alert.textContent(), { timeout: 20_000 })
      .toBe(r.stderr.trim().replace(/^memlens: /, ''));
  });
});
