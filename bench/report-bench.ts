/**
 * `npm run bench -- --only-report`: `memlens report` on the bundled example, the corpus's largest
 * file and synthetic snapshots: the command's wall time, the page's size (and what the snapshot
 * takes in it, gzipped), and in headless Chromium from file:// the time from navigation to the
 * Diagnosis's first card and to the first painted timeline, beside the same file served by
 * `memlens view` (the same app fetching the file instead of reading it from the page).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { cachedSnapshot, ROOT } from './cached-snapshot.js';
import { openBrowser, startView } from './view-session.js';
import { PAGE_SCRIPT } from './web-bench-page.js';

const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const CORPUS_LARGEST = join(
  ROOT,
  '..',
  'shared',
  'corpus',
  'Wedsonlin_assignment2__results_medium_512_training_memory_snapshot__87b0864.pickle',
);

/** When the Diagnosis's first card is in the page (performance.now(), 0 = navigation start). */
const DIAGNOSIS_SCRIPT = `(() => {
  const obs = new MutationObserver(() => {
    if (document.querySelector('main.diagnosis article.finding')) {
      window.__diagnosisShown = performance.now();
      obs.disconnect();
    }
  });
  obs.observe(document, { subtree: true, childList: true });
})()`;

interface PageTimes {
  diagnosis: number;
  timeline: number;
}

async function pageTimes(url: string): Promise<PageTimes> {
  const { browser, page } = await openBrowser();
  try {
    // Every request that is not the page itself (file:, data:, blob:) would be a leak: abort it.
    await page.route(/^(?!file:|data:|blob:|http:\/\/127\.0\.0\.1)/, (r) => r.abort());
    await page.addInitScript({ content: DIAGNOSIS_SCRIPT });
    await page.goto(url);
    await page.waitForSelector('main.diagnosis article.finding', { timeout: 600_000 });
    const diagnosis = (await page.evaluate('window.__diagnosisShown')) as number;
    const timelinePage = await browser.newPage({ viewport: { width: 1400, height: 950 } });
    await timelinePage.addInitScript({ content: PAGE_SCRIPT });
    await timelinePage.goto(url.includes('#') ? `${url}&tab=timeline` : `${url}#tab=timeline`);
    const timeline = (await timelinePage.evaluate('window.__bench.firstTimeline')) as number;
    return { diagnosis, timeline };
  } finally {
    await browser.close();
  }
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(n < 2 ** 20 ? 2 : 1)} MiB`;
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function benchReport(sizes: string): Promise<void> {
  const files: [string, string][] = [['bundled example', join(ROOT, 'examples', 'example_snapshot.pickle')]];
  if (existsSync(CORPUS_LARGEST)) files.push(['corpus (largest)', CORPUS_LARGEST]);
  for (const size of sizes.split(',').filter(Boolean))
    files.push([`synthetic ${size}`, cachedSnapshot(size)]);
  const dir = mkdtempSync(join(tmpdir(), 'memlens-report-bench-'));
  console.log('\n`memlens report FILE -o page.html`, then the page from file:// in headless Chromium');
  console.log('(network blocked), beside the same file served by `memlens view`; times from navigation.\n');
  console.log(
    '| file | size | gzipped inside | page | page / file | memlens report | Diagnosis shown | first timeline | served: Diagnosis | served: first timeline |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  try {
    for (const [label, file] of files) {
      const out = join(dir, `${basename(file)}.html`);
      const t0 = performance.now();
      const json = execFileSync(
        process.execPath,
        [...NODE_FLAGS, CLI, 'report', file, '-o', out, '--max-bytes', '2GiB', '--json'],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      const wall = performance.now() - t0;
      const written = JSON.parse(json) as { output_bytes: number; files: { embedded_bytes: number }[] };
      const size = statSync(file).size;
      const offline = await pageTimes(pathToFileURL(out).href);
      const view = await startView(file);
      let served: PageTimes;
      try {
        served = await pageTimes(view.url);
      } finally {
        await view.stop();
      }
      console.log(
        `| ${label} | ${mib(size)} | ${mib(written.files[0]!.embedded_bytes)} | ${mib(written.output_bytes)} | ${(written.output_bytes / size).toFixed(3)} | ${sec(wall)} | ${sec(offline.diagnosis)} | ${sec(offline.timeline)} | ${sec(served.diagnosis)} | ${sec(served.timeline)} |`,
      );
      rmSync(out, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
