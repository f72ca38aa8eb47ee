import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { isUserCode } from '../../src/engine/derived/frames/frame-kinds.js';
import { shortPath } from '../../src/engine/derived/frames/short-path.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { timelinePage } from '../helpers/timeline-page.js';
import { CHROMIUM } from '../helpers/view-server.js';

/**
 * The details panel of a pinned allocation, in headless Chromium on a generated snapshot whose
 * stacks are recorded as stacks="all" does (recorder, allocator, dispatcher and interpreter
 * frames around the user's): the stack starts at the user's frame; "full stack" shows every
 * recorded frame, the recorder's first.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const SHOTS = '/tmp/shots/frames';
const ready = existsSync(CHROMIUM) && existsSync(join(ROOT, 'dist', 'web', 'index.html'));

describe.skipIf(!ready && process.env.CI === undefined)('details panel: the user frame first', () => {
  const generated = generateSnapshotBytes({ events: 3000, seed: 91 });
  const s = loadSnapshotBytes(generated.bytes);
  const d = s.devices[0]!;
  const app = timelinePage(generated.bytes, ARTIFACTS);
  let page: Page;
  beforeAll(() => {
    page = app.page();
    mkdirSync(SHOTS, { recursive: true });
  });
  const details = () => page.getByLabel('allocation details');
  const items = () => details().locator('ol.stack > li');

  /** The largest allocation made from a given kind of stack, with its alloc entry. */
  const largest = (want: (frames: ReturnType<typeof s.stacks.frames>) => boolean) => {
    let best = -1;
    for (let id = 0; id < d.allocations.count; id++) {
      if (d.allocations.start[id]! < 0 || !want(s.stacks.frames(d.allocations.stack[id]!))) continue;
      if (best < 0 || d.allocations.size[id]! > d.allocations.size[best]!) best = id;
    }
    return {
      id: best,
      entry: d.allocations.start[best]!,
      frames: s.stacks.frames(d.allocations.stack[best]!),
    };
  };

  it("a forward allocation's stack starts at the user's frame; full stack starts at the recorder", async () => {
    const a = largest((f) => f.some(isUserCode) && f.some((x) => x.name.includes('_ops::')));
    await app.open(`&entry=${a.entry}&alloc=${a.id}`);
    await expect.poll(() => details().getAttribute('data-alloc')).toBe(String(a.id));
    const user = a.frames.find(isUserCode)!;
    const first = items().first();
    await expect.poll(() => first.getAttribute('data-kind')).toBe('user');
    expect(await first.locator('.fn').textContent()).toBe(user.name);
    expect(await first.locator('.loc').textContent()).toBe(`${shortPath(user.filename)}:${user.line}`);
    expect(await details().textContent()).not.toMatch(/unwind|CUDACachingAllocator|_PyEval_EvalFrameDefault/);
    expect(await details().textContent()).toMatch(
      /your code first.*recorder, allocator, dispatcher and interpreter frames hidden/,
    );
    await details().screenshot({ path: join(SHOTS, 'details-user-first.png') });
    await details().locator('details.inner-frames summary').click();
    await details().screenshot({ path: join(SHOTS, 'details-inner-open.png') });

    await details().getByLabel('full stack').check();
    await expect.poll(() => items().count()).toBe(a.frames.length);
    expect(await items().first().locator('.fn').textContent()).toMatch(/^torch::unwind::unwind/);
    await details().screenshot({ path: join(SHOTS, 'details-full.png') });
  });

  it('a backward-pass allocation (no Python frame) starts at its autograd node, not the allocator', async () => {
    const a = largest((f) => f.length > 0 && !f.some((x) => x.filename.endsWith('.py')));
    await app.open(`&entry=${a.entry}&alloc=${a.id}`);
    await expect.poll(() => details().getAttribute('data-alloc')).toBe(String(a.id));
    await expect.poll(() => items().first().getAttribute('data-kind')).toBe('native');
    expect(await items().first().locator('.fn').textContent()).not.toMatch(
      /CUDACachingAllocator|unwind|empty/,
    );
    await details().screenshot({ path: join(SHOTS, 'details-backward.png') });
  });

  it("the Blocks table's frame column names backward allocations by their autograd node", async () => {
    await app.open('');
    await page.getByRole('tab', { name: 'Blocks' }).click();
    const cells = page.locator('td.col-frame');
    await expect.poll(() => cells.count(), { timeout: 30_000 }).toBeGreaterThan(5);
    expect((await cells.allTextContents()).join('\n')).not.toMatch(/CUDACachingAllocator|unwind/);
    // The rows of the backward pass (the Blocks frame filter, as `blocks --filter frame~Backward`).
    const filter = page.getByLabel('blocks frame', { exact: true });
    await filter.fill('Backward');
    await filter.press('Enter');
    await expect
      .poll(async () => (await cells.allTextContents()).every((t) => t.includes('Backward')))
      .toBe(true);
    expect((await cells.allTextContents()).some((t) => /Backward\d*::apply\(…\)/.test(t))).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'blocks-frames.png') });
  });
});
