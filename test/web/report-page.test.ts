import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { reportChunks } from '../../src/cli/report/report-page.js';
import { appTemplate } from '../../src/cli/report/report-template.js';
import { formatBytes } from '../../src/engine/base/format.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { awaitableCycle, writeCycleFiles, writeCycleRun } from '../helpers/cycle-files.js';
import { PLANTED_RUN, writeGeneratedRun } from '../helpers/generated-run.js';
import { CHROMIUM, CLI, openBrowser } from '../helpers/view-server.js';

/**
 * A `memlens report` page opened from file:// in headless Chromium with every request that is
 * not file:, data: or blob: aborted (and none may be attempted): it opens on the Diagnosis with
 * the findings `memlens diagnose --json` prints, the timeline draws, it works inside an iframe of
 * another page, and a run's page shows its Run page with the snapshots it left out named.
 * Screenshots go to /tmp/shots/report/.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = '/tmp/shots/report';
const APP = join(ROOT, 'dist', 'web', 'index.html');
const ready = existsSync(CHROMIUM) && existsSync(APP);
/** The corpus's largest file: a real training loop's trace. */
const CORPUS = join(
  ROOT,
  '..',
  'shared',
  'corpus',
  'Wedsonlin_assignment2__results_medium_512_training_memory_snapshot__87b0864.pickle',
);

let dir = '';

function cli(...args: string[]): string {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    cwd: dir,
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`memlens ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/**
 * The markup of docs/report.md's cell, `IFrame(src, width='100%', height=800)`, as IPython writes
 * it (its 8.x markup, copied, where IPython is not installed).
 */
function ipythonIFrame(src: string): string {
  const code = `from IPython.display import IFrame; print(IFrame(${JSON.stringify(src)}, width='100%', height=800)._repr_html_())`;
  const r = spawnSync('/usr/bin/python3', ['-c', code], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.includes('<iframe')) return r.stdout;
  return `<iframe width="100%" height="800" src="${src}" frameborder="0" allowfullscreen></iframe>`;
}

/** docs/report.md's other cell: `HTML(f'<iframe srcdoc="{html.escape(page)}" …>')`, as IPython writes it. */
function ipythonSrcdoc(report: string): string {
  const code = `import html, sys; from IPython.display import HTML; print(HTML(f'<iframe srcdoc="{html.escape(open(sys.argv[1]).read())}" width="100%" height="800"></iframe>')._repr_html_())`;
  const r = spawnSync('/usr/bin/python3', ['-c', code, report], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status === 0 && r.stdout.includes('<iframe')) return r.stdout;
  const escaped = readFileSync(report, 'utf8')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#x27;');
  return `<iframe srcdoc="${escaped}" width="100%" height="800"></iframe>`;
}

/** The headlines the Diagnosis shows as cards (the CLI's findings but its notes). */
function diagnosedHeadlines(file: string): string[] {
  const out = JSON.parse(cli('diagnose', file, '--json')) as {
    files: { devices: { findings: { kind: string; headline: string }[] }[] }[];
  };
  return out.files[0]!.devices[0]!.findings.filter((f) => f.kind !== 'warning').map((f) => f.headline);
}

/** A report page of one snapshot whose data is split into parts of 3000 gzipped bytes. */
function reportOfParts(name: string, bytes: Uint8Array): string {
  const snapshots = [{ name, label: '', size: bytes.length, gzipped: gzipSync(bytes) }];
  const chunks: Uint8Array[] = [];
  const manifest = { memlens: 'test', source: name, run: null, omitted: [] };
  const app = appTemplate(join(ROOT, 'dist', 'web'));
  reportChunks(app, name, { manifest, snapshots, cycles: [] }, (c) => chunks.push(c), 3000);
  return Buffer.concat(chunks).toString('utf8');
}

/** Non-transparent pixels of the timeline's layer canvas (this file is type-checked without the DOM). */
function drawnPixels(frame: Page | Frame): Promise<number> {
  return frame.locator('.plot-moving canvas').evaluate((canvas) => {
    const c = canvas as unknown as {
      width: number;
      height: number;
      getContext(k: '2d'): {
        getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
      };
    };
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
    return n;
  });
}

describe.skipIf(!ready && process.env.CI === undefined)('a memlens report page, offline', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every request the page tried that was not file:, data: or blob: (each one aborted). */
  const attempted: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-report-page-'));
    mkdirSync(SHOTS, { recursive: true });
    let first: Page;
    ({ browser, page: first } = await openBrowser());
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await first.close();
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (/^(file|data|blob):/.test(url)) return route.continue();
      attempted.push(url);
      return route.abort();
    });
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
  });

  const tab = (p: Page | Frame, name: string) => p.getByRole('tab', { name });
  const headlines = (p: Page | Frame) => p.locator('article.finding .headline').allTextContents();

  /** Writes a report of `file` (in `dir`), opens it, and checks its Diagnosis and timeline. */
  const checkFile = async (file: string, shot: string, lead?: string) => {
    cli('report', file, '-o', `${shot}.html`);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // A Content-Security-Policy violation is reported as a console error.
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const workers: string[] = [];
    page.on('worker', (w) => workers.push(w.url()));
    await page.goto(pathToFileURL(join(dir, `${shot}.html`)).href);
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
    expect(await tab(page, 'Diagnosis').getAttribute('aria-selected')).toBe('true');
    // The snapshot's text went to the engine's worker, and was ungzipped by a worker of its own beside it.
    expect(workers.length).toBe(2);
    await expect.poll(() => headlines(page), { timeout: 30_000 }).toEqual(diagnosedHeadlines(file));
    if (lead) expect(await page.locator('article.finding').first().getAttribute('class')).toBe(lead);
    // The page's policy still lets the engine compile its WebAssembly entry scanner.
    expect(Number(await page.locator('.load-done').getAttribute('data-scanned-entries'))).toBeGreaterThan(0);
    // The status line says the snapshot's own size (as the file dropped on the page does), not the gzipped bytes inside.
    expect(await page.locator('.load-done').textContent()).toContain(
      `${basename(file)}: ${formatBytes(statSync(resolve(dir, file)).size)} read in`,
    );
    await page.screenshot({ path: join(SHOTS, `${shot}-diagnosis.png`) });
    await tab(page, 'Timeline & pool state').click();
    await page.waitForSelector('canvas[data-ready="true"]', { timeout: 60_000 });
    expect(await drawnPixels(page)).toBeGreaterThan(10_000);
    await page.screenshot({ path: join(SHOTS, `${shot}-timeline.png`) });
    expect(errors).toEqual([]);
    expect(attempted).toEqual([]);
  };

  it('a generated OOM: the Diagnosis first, with the CLI’s findings; the timeline draws; nothing fetched', async () => {
    const bytes = generateSnapshotBytes({ events: 3000, seed: 61, oomCause: 'fragmentation' }).bytes;
    writeFileSync(join(dir, 'oom.pickle'), bytes);
    await checkFile('oom.pickle', 'oom', 'finding oom lead');
    expect(page.url()).toMatch(/report-page-[^/]+\/oom\.html#file=oom\.pickle&/);
  }, 180_000);

  it.skipIf(!existsSync(CORPUS))(
    'a real snapshot of the corpus: the same',
    async () => {
      await checkFile(CORPUS, 'corpus');
    },
    180_000,
  );

  it("the file is asked of the worker before the app is first drawn (React's first render came first)", async () => {
    cli('report', 'oom.pickle', '-o', 'early.html'); // oom.pickle: written by the first test
    const p = await context.newPage();
    // When the load query is posted, and when the app's root first holds anything (plain
    // JavaScript: it runs in the page, and this file is type-checked without the DOM).
    await p.addInitScript({
      content: `(() => {
        const marks = (window.marks = {});
        const post = Worker.prototype.postMessage;
        Worker.prototype.postMessage = function (m, ...rest) {
          if (m && m.query === 'load') marks.load ??= performance.now();
          return post.call(this, m, ...rest);
        };
        new MutationObserver(() => {
          if ((document.getElementById('root')?.childElementCount ?? 0) > 0) marks.drawn ??= performance.now();
        }).observe(document, { subtree: true, childList: true });
      })();`,
    });
    await p.goto(pathToFileURL(join(dir, 'early.html')).href);
    await p.locator('article.finding').first().waitFor({ timeout: 60_000 });
    const marks = (await p.evaluate('window.marks')) as { load: number; drawn: number };
    await p.close();
    expect(marks.load).toBeLessThan(marks.drawn);
  }, 180_000);

  it('a snapshot split over many data elements reads back whole', async () => {
    const bytes = readFileSync(join(dir, 'oom.pickle')); // written by the first test
    const html = reportOfParts('split.pickle', bytes);
    expect(html.match(/<script id="memlens-data-0-\d+"/g)!.length).toBe(
      Math.ceil(gzipSync(bytes).length / 3000),
    );
    writeFileSync(join(dir, 'split.html'), html);
    await page.goto(pathToFileURL(join(dir, 'split.html')).href);
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
    await expect.poll(() => headlines(page), { timeout: 30_000 }).toEqual(diagnosedHeadlines('oom.pickle'));
    expect(attempted).toEqual([]);
  }, 180_000);

  it('a report missing a part or cut inside one says what is wrong in one line, and shows no figure', async () => {
    const bytes = readFileSync(join(dir, 'oom.pickle')); // written by the first test
    const html = reportOfParts('broken.pickle', bytes);
    const part = /<script id="memlens-data-0-1"[^>]*>[^<]*<\/script>/.exec(html)![0];
    const cases: [string, string, RegExp][] = [
      [
        'missing.html',
        html.replace(part, ''),
        /^broken\.pickle: this report lacks its data element memlens-data-0-1$/,
      ],
      // Half of the last part's base64 (a whole number of quanta): the gzip stream stops early.
      [
        'cut.html',
        html.replace(
          /(<script id="memlens-data-0-(\d+)"[^>]*>)([^<]*)(<\/script>)(?![\s\S]*memlens-data-0-)/,
          (_m, a, _n, b64: string, z) => `${a}${b64.slice(0, 4 * Math.floor(b64.length / 8))}${z}`,
        ),
        /^broken\.pickle: bad gzip data: /,
      ],
    ];
    for (const [name, page_html, said] of cases) {
      writeFileSync(join(dir, name), page_html);
      await page.goto(pathToFileURL(join(dir, name)).href);
      const alert = page.getByRole('alert');
      await alert.waitFor({ timeout: 60_000 });
      expect(await alert.textContent(), name).toMatch(said);
      expect(await page.locator('main.diagnosis .finding').count(), name).toBe(0);
    }
  }, 180_000);

  it('the app starts before its data is read: a page that arrives slowly decodes its snapshot as it comes', async () => {
    // Several MiB: the inflater hands the engine 1 MiB at a time.
    const bytes = generateSnapshotBytes({ events: 60_000, seed: 62 }).bytes;
    writeFileSync(join(dir, 'slow.pickle'), bytes);
    const html = reportOfParts('slow.pickle', bytes);
    // Everything up to the last data element now, the rest when the test says.
    const held = html.lastIndexOf('<script id="memlens-data-');
    let release = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    const server = createServer(async (req, res) => {
      if (req.url !== '/slow.html') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.write(html.slice(0, held));
      await released;
      res.end(html.slice(held));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const slow = await browser.newPage();
    try {
      const { port } = server.address() as AddressInfo;
      await slow.goto(`http://127.0.0.1:${port}/slow.html`, { waitUntil: 'commit' });
      // The page is still being read, and its snapshot is already being decoded.
      await expect
        .poll(async () => Number(await slow.locator('.loading progress').getAttribute('value')), {
          timeout: 60_000,
        })
        .toBeGreaterThan(0);
      const readyState = () =>
        (globalThis as unknown as { document: { readyState: string } }).document.readyState;
      expect(await slow.evaluate(readyState)).toBe('loading');
      release();
      await slow.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
      await expect
        .poll(() => headlines(slow), { timeout: 30_000 })
        .toEqual(diagnosedHeadlines('slow.pickle'));
    } finally {
      release();
      await slow.close();
      server.close();
    }
  }, 180_000);

  it('inside an iframe of another file:// page (as Jupyter’s IFrame shows it)', async () => {
    cli('report', join(ROOT, 'examples', 'example_snapshot.pickle'), '-o', 'framed.html');
    writeFileSync(
      join(dir, 'notebook.html'),
      `<!doctype html><html><body><h1>notebook</h1>${ipythonIFrame('framed.html')}</body></html>`,
    );
    await page.goto(pathToFileURL(join(dir, 'notebook.html')).href);
    const frame = page.frames().find((f) => f.url().includes('framed.html'))!;
    await frame.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
    await expect
      .poll(() => headlines(frame))
      .toEqual(diagnosedHeadlines(join(ROOT, 'examples', 'example_snapshot.pickle')));
    await tab(frame, 'Timeline & pool state').click();
    await frame.waitForSelector('canvas[data-ready="true"]', { timeout: 60_000 });
    expect(await drawnPixels(frame)).toBeGreaterThan(10_000);
    // The view state lives in the frame's own hash; the notebook's page stays where it was.
    expect(frame.url()).toMatch(/framed\.html#.*tab=timeline/);
    expect(page.url()).toMatch(/notebook\.html$/);
    await page.screenshot({ path: join(SHOTS, 'iframe.png') });
    expect(attempted).toEqual([]);
  }, 180_000);

  it('inside a Jupyter cell’s HTML (an iframe whose srcdoc is the page: the notebook carries it)', async () => {
    const report = join(dir, 'framed.html'); // written by the iframe test
    writeFileSync(
      join(dir, 'cell.html'),
      `<!doctype html><html><body><h1>cell</h1>${ipythonSrcdoc(report)}</body></html>`,
    );
    await page.goto(pathToFileURL(join(dir, 'cell.html')).href);
    const frame = page.frames().find((f) => f.url().startsWith('about:srcdoc'))!;
    await frame.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
    await expect
      .poll(() => headlines(frame))
      .toEqual(diagnosedHeadlines(join(ROOT, 'examples', 'example_snapshot.pickle')));
    await tab(frame, 'Timeline & pool state').click();
    await frame.waitForSelector('canvas[data-ready="true"]', { timeout: 60_000 });
    expect(await drawnPixels(frame)).toBeGreaterThan(10_000);
    expect(frame.url()).toMatch(/^about:srcdoc#.*tab=timeline/);
    await page.screenshot({ path: join(SHOTS, 'srcdoc.png') });
    expect(attempted).toEqual([]);
  }, 180_000);

  it('served by a plain static server (as VS Code’s Live Preview or Jupyter serve a file): the page asks it for nothing more', async () => {
    cli('report', join(ROOT, 'examples', 'example_snapshot.pickle'), '-o', 'static.html');
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url ?? '');
      if (req.url !== '/static.html') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html' }).end(readFileSync(join(dir, 'static.html')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const http = await browser.newPage();
      await http.goto(`http://127.0.0.1:${port}/static.html`);
      await http.waitForSelector('main.diagnosis article.finding', { timeout: 60_000 });
      await http.close();
    } finally {
      server.close();
    }
    // The browser's own favicon request aside, only the page.
    expect(asked.filter((u) => u !== '/favicon.ico')).toEqual(['/static.html']);
  }, 180_000);

  it('a run: its Run page, the snapshots over --max-bytes named as left out; a kept cell opens, a left-out one says why', async () => {
    const files = writeGeneratedRun(join(dir, 'run'), PLANTED_RUN);
    const out = JSON.parse(
      cli('report', join(dir, 'run'), '-o', 'run.html', '--max-bytes', '300KiB', '--json'),
    ) as {
      files: { name: string }[];
      omitted: { name: string; reason: string }[];
    };
    expect(out.files.length + out.omitted.length).toBe(files.length);
    expect(out.omitted.length).toBeGreaterThan(0);
    // The cells the findings name come first: the OOM dump and rank 1's first outlying window.
    const kept = out.files.map((f) => f.name);
    expect(kept.some((n) => /oom.*rank3/.test(n))).toBe(true);
    expect(kept).toContain('run/step3/torch_memory_rank1_pid40001.pickle');

    await page.goto(pathToFileURL(join(dir, 'run.html')).href);
    await expect.poll(() => page.locator('.hm-cell').count(), { timeout: 60_000 }).toBe(files.length);
    const notice = page.getByRole('group', { name: 'omitted snapshots' });
    expect(await notice.locator('summary').textContent()).toBe(
      `${out.omitted.length} snapshots are not in this report (its cells are on the Run page but do not open)`,
    );
    const listed = await notice.locator('li').allTextContents();
    expect(listed).toHaveLength(out.omitted.length);
    for (const [i, o] of out.omitted.entries()) expect(listed[i]).toContain(o.name);
    // The left-out cells are marked in the heatmap itself: hatched, and their hover text says why.
    const absent = page.locator('.hm-cell.absent');
    expect(await absent.count()).toBe(out.omitted.length);
    for (const o of out.omitted) {
      const m = /step(\d+)\/torch_memory_rank(\d+)/.exec(o.name)!;
      const cell = page.locator(`.hm-cell[data-rank="${m[2]}"][data-step="${m[1]}"][data-kind="step"]`);
      expect(await cell.getAttribute('class')).toContain('absent');
      expect(await cell.getAttribute('title')).toContain(`not in this report: ${o.reason}`);
    }
    await page.screenshot({ path: join(SHOTS, 'run.png'), fullPage: true });
    await page.locator('section.heatmap').screenshot({ path: join(SHOTS, 'run-heatmap.png') });

    await page.locator('.hm-cell[data-rank="1"][data-step="3"]').click();
    await page.waitForSelector('main.diagnosis[aria-busy="false"]', { timeout: 60_000 });
    await page.getByRole('button', { name: '← back to the run' }).click();
    const left = out.omitted[0]!.name;
    const step = /step(\d+)\/torch_memory_rank(\d+)/.exec(left)!;
    await page.locator(`.hm-cell[data-rank="${step[2]}"][data-step="${step[1]}"]`).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe(`${left}: not in this report: ${out.omitted[0]!.reason}`);
    expect(attempted).toEqual([]);
  }, 180_000);

  it('a run with recorded cycles: its Cycles tab works offline as under `memlens view DIR`', async () => {
    const root = join(dir, 'cyclerun');
    const recorded = writeCycleRun(root);
    const listed = (
      JSON.parse(cli('cycles', root, '--json')) as {
        cycles: { file: string; tensors: { allocation: { id: number; alloc_entry: number } | null }[] }[];
      }
    ).cycles;
    const shown = (p: string) => join(basename(root), relative(root, p));
    cli('report', root, '-o', 'cycles.html');
    await page.goto(pathToFileURL(join(dir, 'cycles.html')).href);
    await tab(page, 'Cycles').click();
    await page.waitForSelector('.cycle-list button', { timeout: 60_000 });
    expect(await page.locator('.cycle-list button').count()).toBe(listed.length);
    const c = recorded.cycles[1]!;
    const item = page.locator(`.cycle-list button[data-cycle="${shown(c.path)}"]`);
    await item.click();
    expect(await item.textContent()).toContain('AwaitableTensor.value → Tensor 2.00 MiB');
    const graph = page.locator('.cycle-graph svg');
    expect(await graph.locator('[data-node]').count()).toBe(5);
    await page.screenshot({ path: join(SHOTS, 'cycles.png'), fullPage: true });
    // Its tensor's link opens the window's embedded snapshot on that allocation.
    const a = listed.find((x) => x.file === c.path)!.tensors[0]!.allocation!;
    await page.locator(`[data-alloc="${a.id}"]`).click();
    await page.waitForSelector(`aside.details[data-alloc="${a.id}"]`, { timeout: 60_000 });
    const hash = new URLSearchParams(new URL(page.url()).hash.slice(1));
    expect(hash.get('file')).toBe(shown(recorded.windows[c.window]!));
    expect(hash.get('entry')).toBe(String(a.alloc_entry));
    // That snapshot's Diagnosis cites the recorded cycle, as under `memlens view`.
    await tab(page, 'Diagnosis').click();
    await expect
      .poll(() => page.locator('main.diagnosis').textContent(), { timeout: 30_000 })
      .toContain('recorded cycle (rank 0, collection 1): AwaitableTensor.value → Tensor 2.00 MiB');
    expect(attempted).toEqual([]);

    // Over --max-bytes (room for the first two cycles, no snapshot) the cycles left out are named
    // on the page, the rest listed, and a link to a snapshot left out says so.
    const whole = JSON.parse(cli('report', root, '-o', 'x.html', '--json')) as {
      cycles: { name: string; embedded_bytes: number }[];
    };
    const budget = whole.cycles[0]!.embedded_bytes + whole.cycles[1]!.embedded_bytes;
    const cut = JSON.parse(
      cli('report', root, '-o', 'cycles-cut.html', '--max-bytes', String(budget), '--json'),
    ) as { cycles: { name: string }[]; omitted: { name: string; kind: string; reason: string }[] };
    expect(cut.cycles.map((x) => x.name)).toEqual(whole.cycles.slice(0, 2).map((x) => x.name));
    const left = cut.omitted.filter((o) => o.kind === 'cycle');
    await page.goto(pathToFileURL(join(dir, 'cycles-cut.html')).href);
    await tab(page, 'Cycles').click();
    await page.waitForSelector('.cycle-list button', { timeout: 60_000 });
    expect(await page.locator('.cycle-list button').count()).toBe(listed.length - left.length);
    const notice = page.getByRole('group', { name: 'omitted cycles' });
    expect(await notice.locator('summary').textContent()).toBe(
      `${left.length} recorded cycles are not in this report (the Cycles tab lists the rest)`,
    );
    expect(await notice.locator('li').count()).toBe(left.length);
    await page.screenshot({ path: join(SHOTS, 'cycles-cut.png'), fullPage: true });
    const kept = recorded.cycles.find((x) => cut.cycles.some((k) => k.name === shown(x.path)))!;
    await page.locator(`.cycle-list button[data-cycle="${shown(kept.path)}"]`).click();
    const id = listed.find((x) => x.file === kept.path)!.tensors[0]!.allocation!.id;
    await page.locator(`[data-alloc="${id}"]`).click();
    const window = shown(recorded.windows[kept.window]!);
    const why = cut.omitted.find((o) => o.name === window)!.reason;
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe(`${window}: not in this report: ${why}`);
    expect(attempted).toEqual([]);
  }, 180_000);

  it('a run recorded without a GPU (cycles alone): the report opens on its Cycles tab', async () => {
    writeCycleFiles(join(dir, 'cpu-run'), [
      awaitableCycle({ time_us: 1_700_000_000_000_000, step: 3, device: 'cpu' }, [
        { bytes: 1024, data_ptr: 4096, device: 'cpu' },
      ]),
    ]);
    cli('report', 'cpu-run', '-o', 'cpu.html');
    await page.goto(pathToFileURL(join(dir, 'cpu.html')).href);
    await page.waitForSelector('.cycle-list button', { timeout: 60_000 });
    expect(await tab(page, 'Cycles').getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('.cycle-detail').textContent()).toContain('no CUDA tensor');
    await page.screenshot({ path: join(SHOTS, 'cycles-cpu-only.png') });
    expect(attempted).toEqual([]);
  }, 180_000);
});
