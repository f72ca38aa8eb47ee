import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { servedFiles } from '../helpers/timeline-page.js';
import { CHROMIUM, CLI } from '../helpers/view-server.js';

/**
 * The OOM panel in headless Chromium on a generated OOM caused outside PyTorch: without the GPU's
 * total memory it gives both readings (as `memlens oom` does); typed with units into the capacity
 * field it says outside PyTorch, with the failing request's stack, what held memory and the replays.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/oom';
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);

function oomJson(...args: string[]) {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'oom', '--json', ...args], { encoding: 'utf8' });
  return JSON.parse(r.stdout).files[0].devices[0].ooms;
}

describe.skipIf(!ready && process.env.CI === undefined)('the OOM panel in headless Chromium', () => {
  const served = servedFiles(
    Object.fromEntries(
      (['outside', 'fragmentation'] as const).map((cause) => [
        `${cause}.pickle`,
        generateSnapshotBytes({ events: 3000, seed: 61, oomCause: cause }).bytes,
      ]),
    ),
    [],
    SHOTS,
  );
  const file = served.file;
  const page = () => served.page();
  const open = async (name: string) => {
    await page().goto(`${served.url()}#file=${encodeURIComponent(file(name))}&tab=analyses&panel=oom`);
    await page().reload();
  };
  const verdict = () => page().locator('section[aria-label="oom"] .verdict').first();

  it('without the GPU size: both readings; with "80 GiB" typed: outside PyTorch', async () => {
    const blind = oomJson(file('outside.pickle'))[0];
    await open('outside.pickle');
    await expect.poll(() => verdict().textContent(), { timeout: 20_000 }).toBe('undetermined');
    expect(await page().locator('section[aria-label="oom"] .headline').textContent()).toBe(blind.headline);
    await page().screenshot({ path: join(SHOTS, 'oom-undetermined.png'), fullPage: true });

    await page().getByLabel('capacity').fill('80 GiB');
    await page().getByRole('button', { name: 'judge' }).click();
    await expect.poll(() => verdict().textContent(), { timeout: 20_000 }).toBe('outside PyTorch');
    const given = oomJson('--capacity', '80GiB', file('outside.pickle'))[0];
    expect(await page().locator('section[aria-label="oom"] .headline').textContent()).toBe(given.headline);
    // The failing request's stack starts in the user's code.
    const top = page().locator('.oom-stack .frames li').first();
    expect(await top.textContent()).toContain(`${given.stack[0].name} (`);
    expect(await page().locator('.held').textContent()).toMatch(/held then: .* live allocations/);
    await page().screenshot({ path: join(SHOTS, 'oom-capacity.png'), fullPage: true });
  });

  it('refuses a capacity it cannot read, and shows the engine refusing one below what the file shows', async () => {
    await page().getByLabel('capacity').fill('lots');
    expect(await page().getByRole('button', { name: 'judge' }).isDisabled()).toBe(true);
    expect(await page().locator('section[aria-label="oom"] [role="alert"]').textContent()).toMatch(
      /capacity lots: expected a size/,
    );
    await page().getByLabel('capacity').fill('1 GiB');
    await page().getByRole('button', { name: 'judge' }).click();
    await expect
      .poll(() => page().locator('section[aria-label="oom"] [role="alert"]').textContent(), {
        timeout: 20_000,
      })
      .toMatch(/--capacity 1\.00 GiB is below/);
  });

  it('a fragmentation OOM lists each suggestion with the simulate line that tests it', async () => {
    await open('fragmentation.pickle');
    await expect.poll(() => verdict().textContent(), { timeout: 20_000 }).toBe('fragmentation');
    const lines = await page().locator('.suggestions code').allTextContents();
    const cli = oomJson(file('fragmentation.pickle'))[0];
    expect(lines).toEqual(
      cli.suggestions.map(
        (s: { simulate: string }) => `memlens simulate ${file('fragmentation.pickle')} ${s.simulate}`,
      ),
    );
    expect(lines.join(' ')).toMatch(/--set max_split_size_mb:\d+/);
    await page().screenshot({ path: join(SHOTS, 'oom-fragmentation.png'), fullPage: true });
  });
});
