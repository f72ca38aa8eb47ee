/**
 * `npm run bench:web`: the web app (`memlens view`) in headless Chromium on the cached synthetic
 * snapshots. Per file and run, in a fresh browser: time from navigation to the first painted
 * timeline (with the worker's phases), per real wheel-zoom and drag-pan input event at several
 * zoom levels the time from the event to the painted frame that shows it and the main-thread
 * work it cost (and the time until the sharp re-queried frame), and the pool view's update after
 * selecting entries. First, per file, the first answer (first-answer.ts): time to the first
 * finding and to the first timeline, served and in report.html, against the CLI's `summary`.
 * Prints the machine, its load and Markdown tables for bench/RESULTS.md.
 *
 *   npm run bench:web [-- --sizes 100MB,1GB] [--runs 2] [--frames 120] [--selects 6] [--rounds 3] [--answer-only]
 */
import { Command } from 'commander';
import type { Browser, Page } from 'playwright-core';
import { cachedSnapshot } from './cached-snapshot.js';
import { firstAnswerTable } from './first-answer.js';
import { loadLine, machineLine } from './machine.js';
import { openBrowser, startView } from './view-session.js';
import { PAGE_SCRIPT } from './web-bench-page.js';

/** Zoom levels, as the fraction of the whole trace in view. */
const LEVELS = [1, 1e-1, 1e-3, 1e-5];

interface Query {
  query: string;
  columns: number | null;
  sent: number;
  done: number | null;
  lastByte: number | null;
}
interface GestureRun {
  /** Per event: received → painted, created → painted, the painting frame's own work, main-thread task time. */
  frame: number[];
  latency: number[];
  render: number[];
  work: number[];
  /** Events after which no frame showed a new window. */
  missed: number;
  sharp: number;
}
interface Select {
  ms: number | null;
  entry: number;
  segments: number;
  blocks: number;
  poolQuery: number | null;
}

/** Every figure of one run, by name, in milliseconds. */
type Figures = Map<string, number>;

async function runOnce(url: string, opts: Options): Promise<Figures> {
  const { browser, page } = await openBrowser();
  const f: Figures = new Map();
  try {
    await page.addInitScript({ content: PAGE_SCRIPT });
    await page.goto(url);
    f.set('first timeline', (await page.evaluate('window.__bench.firstTimeline')) as number);
    f.set('first timeline, stacked', (await page.evaluate('window.__bench.timelineStacked')) as number);
    phases(f, (await page.evaluate('window.__bench.queries')) as Query[]);
    spread(f, 'no event: main-thread work (floor)', (await gesture(page, 'none', opts.frames)).work);
    for (const level of LEVELS) await gestures(page, level, opts.frames, f);
    await page.evaluate('window.__bench.zoomTo(1)');
    await selects(page, opts.selects, f);
    await deliveryFloor(browser, opts.frames, f);
  } finally {
    await browser.close();
  }
  return f;
}

/**
 * The browser's own part of "input created → painted": on a blank page with one canvas and a
 * non-passive wheel listener (as the timeline has), the time from an event's creation to its
 * handler, for the same CDP wheel and mouse-move events the gestures send.
 */
async function deliveryFloor(browser: Browser, n: number, f: Figures): Promise<void> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 950 } });
  await page.setContent('<canvas width="1300" height="300" style="width:1300px;height:300px"></canvas>');
  await page.evaluate(`(() => {
    window.__delivery = { wheel: [], mousemove: [] };
    const c = document.querySelector('canvas');
    const note = (e) => window.__delivery[e.type].push(performance.now() - e.timeStamp);
    c.addEventListener('wheel', (e) => { e.preventDefault(); note(e); }, { passive: false });
    c.addEventListener('mousemove', note);
  })()`);
  await page.mouse.move(600, 150);
  for (let i = 0; i < n; i++) {
    await page.mouse.wheel(0, i % 2 ? 60 : -60);
    await page.mouse.move(600 + (i % 2) * 10, 150);
    await page.waitForTimeout(20);
  }
  const d = (await page.evaluate('window.__delivery')) as Record<'wheel' | 'mousemove', number[]>;
  spread(f, 'blank page: wheel created → handler', d.wheel);
  spread(f, 'blank page: mouse move created → handler', d.mousemove);
  await page.close();
}

/** The load's phases as the page sees them: request to last byte decoded, to model ready, then the first LOD. */
function phases(f: Figures, queries: Query[]): void {
  const load = queries.find((q) => q.query === 'load');
  if (load?.done == null) return;
  if (load.lastByte !== null) {
    f.set('  fetch + decode (to last byte)', load.lastByte - load.sent);
    f.set('  model and indexes (last byte → load answered)', load.done - load.lastByte);
  }
  f.set('  load query (sent → answered)', load.done - load.sent);
  const lod = queries.find((q) => q.query === 'timeline' && q.sent >= load.done! && q.done !== null);
  if (lod) f.set('  first timeline LOD query', lod.done! - lod.sent);
  const first = f.get('first timeline, stacked') ?? Number.POSITIVE_INFINITY;
  const order = queries.filter((q) => q.sent >= load.done! && q.sent <= first);
  process.stderr.write(
    `  queries before the first timeline: ${order.map((q) => `${q.query}${q.columns ? `(${q.columns} cols)` : ''} ${fmt((q.done ?? Number.NaN) - q.sent)}`).join(', ')}\n`,
  );
}

async function gestures(page: Page, level: number, frames: number, f: Figures): Promise<void> {
  const [x0, x1] = (await page.evaluate(`window.__bench.zoomTo(${level})`)) as [number, number];
  const name = level === 1 ? 'whole' : `1/${Math.round(1 / level).toLocaleString('en-US')}`;
  process.stderr.write(`  ${name}: window ${x0}..${x1}\n`);
  // At the whole trace a drag cannot move the window (it is clamped to the trace): nothing to draw.
  for (const kind of level === 1 ? (['wheel'] as const) : (['wheel', 'drag'] as const)) {
    const g = await gesture(page, kind, frames);
    spread(f, `${kind} ${name}: event → painted frame`, g.frame);
    spread(f, `${kind} ${name}: input created → painted`, g.latency);
    spread(f, `${kind} ${name}: that frame's rendering work`, g.render);
    spread(f, `${kind} ${name}: main-thread work per event`, g.work);
    if (g.missed > 0) f.set(`${kind} ${name}: events with no new frame (count)`, g.missed);
    f.set(`${kind} ${name}: sharp after last event`, g.sharp);
  }
}

/**
 * One gesture of n real input events (CDP, through Playwright's mouse), one at a time: each is
 * timed from the event to the end of the frame that shows its window (the page script's
 * B.arm/B.painted), and the main thread's task time over it is read from CDP TaskDuration.
 * 'wheel' zooms in and out by turns (the window stays near where it is), 'drag' pans back and
 * forth, 'none' sends nothing and waits two frames (the floor of the measurement itself).
 */
async function gesture(page: Page, kind: 'wheel' | 'drag' | 'none', n: number): Promise<GestureRun> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const taskMs = async (): Promise<number> => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    return (metrics.find((m) => m.name === 'TaskDuration')?.value ?? Number.NaN) * 1000;
  };
  const p = (await page.evaluate('window.__bench.plot()')) as { x0: number; x1: number; y: number };
  const cx = (p.x0 + p.x1) / 2;
  // Back and forth 10 px a step (a triangle wave: every step moves, as a real drag's events do).
  const dragX = (i: number): number => cx - 100 + 10 * Math.abs(((i + 11) % 40) - 20);
  await page.mouse.move(cx, p.y);
  if (kind === 'drag') await page.mouse.down();
  const run: GestureRun = { frame: [], latency: [], render: [], work: [], missed: 0, sharp: 0 };
  for (let i = 0; i < n; i++) {
    await page.evaluate('window.__bench.arm()');
    const t0 = await taskMs();
    if (kind === 'wheel') await page.mouse.wheel(0, i % 2 ? 60 : -60);
    else if (kind === 'drag') await page.mouse.move(dragX(i), p.y);
    if (kind === 'none') await page.evaluate('window.__bench.frames(2)');
    else {
      const r = (await page.evaluate('window.__bench.painted()')) as {
        frame: number;
        latency: number;
        render: number;
      } | null;
      if (r === null) {
        run.missed++;
        process.stderr.write(`    ${kind} event ${i}: no new frame\n`);
      } else {
        run.frame.push(r.frame);
        run.latency.push(r.latency);
        run.render.push(r.render);
      }
    }
    run.work.push((await taskMs()) - t0);
  }
  // The gesture ends where it began (in and out, back and forth), whose layer is still there: one
  // more event moves to a window not seen yet, and sharp times its level of detail.
  await page.evaluate('window.__bench.arm()');
  if (kind === 'wheel') await page.mouse.wheel(0, -60);
  else if (kind === 'drag') await page.mouse.move(dragX(n - 1) + 30, p.y);
  if (kind === 'drag') await page.mouse.up();
  if (kind !== 'none') run.sharp = (await page.evaluate('window.__bench.sharpAfterLast()')) as number;
  await cdp.detach();
  return run;
}

/** Random entries picked by clicks on the plot, then a step with →; each time until the pool view shows it. */
async function selects(page: Page, n: number, f: Figures): Promise<void> {
  let seed = 12345;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const clicks: Select[] = [];
  for (let i = 0; i < n; i++)
    clicks.push((await page.evaluate(`window.__bench.selectEntry('click', ${rnd()})`)) as Select);
  const step = (await page.evaluate(`window.__bench.selectEntry('ArrowRight')`)) as Select;
  for (const c of [...clicks, step])
    process.stderr.write(
      `  entry ${c.entry}: ${c.segments} segments, ${c.blocks} blocks, ${fmt(c.ms)} (select query ${fmt(c.poolQuery)})\n`,
    );
  const ms = clicks.map((c) => c.ms ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
  f.set('pool: click → pool shown, median', quantile(ms, 0.5));
  f.set('pool: click → pool shown, max', ms[ms.length - 1]!);
  f.set(
    'pool: worker select query (pick, entry, details, pool), max',
    Math.max(...clicks.map((c) => c.poolQuery ?? Number.NaN)),
  );
  f.set('pool: → key → pool shown', step.ms ?? Number.POSITIVE_INFINITY);
}

/** p50, p95 and max of per-frame figures. */
function spread(f: Figures, name: string, values: number[]): void {
  const sorted = [...values].sort((a, b) => a - b);
  f.set(`${name} p50`, quantile(sorted, 0.5));
  f.set(`${name} p95`, quantile(sorted, 0.95));
  f.set(`${name} max`, sorted[sorted.length - 1]!);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const fmt = (ms: number | null | undefined): string =>
  ms == null || !Number.isFinite(ms)
    ? '—'
    : ms >= 1000
      ? `${(ms / 1000).toFixed(2)} s`
      : `${ms.toFixed(1)} ms`;

interface Options {
  sizes: string;
  runs: string;
  rounds: number;
  answerOnly: boolean;
  frames: number;
  selects: number;
}

async function main(opts: Options): Promise<void> {
  const runs = Math.max(1, Number(opts.runs));
  console.log(machineLine());
  console.log('Chromium headless (--disable-gpu: software rendering), viewport 1400×950');
  console.log(`load before: ${loadLine()}`);
  console.log(`${runs} runs per file, each in a fresh browser; best and spread (min–max) of the runs\n`);
  const tables: string[] = [];
  for (const size of opts.sizes.split(',').map((s) => s.trim())) {
    const file = cachedSnapshot(size);
    tables.push(await firstAnswerTable(file, `synthetic ${size}`, Math.max(1, opts.rounds)));
    if (opts.answerOnly) continue;
    const view = await startView(file);
    const all: Figures[] = [];
    try {
      for (let r = 0; r < runs; r++) {
        process.stderr.write(`${size}, run ${r + 1}/${runs}\n`);
        // The app opens on the Diagnosis tab; the bench measures the timeline.
        all.push(await runOnce(`${view.url}#tab=timeline`, opts));
      }
    } finally {
      await view.stop();
    }
    tables.push(table(`synthetic ${size}`, all));
  }
  console.log(tables.join('\n'));
  console.log(`load after: ${loadLine()}`);
}

function table(title: string, runs: Figures[]): string {
  const lines = [`| ${title} | best | spread (min–max) |`, '|---|---|---|'];
  for (const name of runs[0]!.keys()) {
    const v = runs.map((f) => f.get(name) ?? Number.NaN);
    const min = Math.min(...v);
    const show = name.endsWith('(count)') ? (x: number) => String(x) : fmt;
    lines.push(`| ${name} | ${show(min)} | ${show(min)} – ${show(Math.max(...v))} |`);
  }
  return `${lines.join('\n')}\n`;
}

new Command('bench:web')
  .option('--sizes <list>', 'synthetic file sizes', '100MB,1GB')
  .option('--runs <n>', 'runs per file, each in a fresh browser', '2')
  .option('--frames <n>', 'frames per gesture', (v) => Number(v), 120)
  .option('--selects <n>', 'random entries selected by click', (v) => Number(v), 6)
  .option(
    '--rounds <n>',
    'rounds of the first-answer table (CLI summary, served, report.html)',
    (v) => Number(v),
    3,
  )
  .option('--answer-only', 'only the first-answer table (no gestures or selections)', false)
  .action(main)
  .parseAsync();
