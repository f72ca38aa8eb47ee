/**
 * The web app's first answer on one file, against the CLI's `summary` of it, in one run (the
 * machine is shared: only ratios taken side by side mean anything). Per round, one after another:
 * `memlens summary FILE`; the served app (`memlens view`) to its first finding (the first card on
 * the Diagnosis) and, in another fresh browser, to its first painted timeline (the outline the
 * worker sends first) and its stacked one; the same on the
 * file's `memlens report` page from file://. Wall time and CPU time (the CLI's own; the browser's
 * processes and the view server together, from /proc) of each, medians over the rounds, and peak
 * memory: the CLI's peak RSS, and the tab's (the peak RSS, VmHWM, of the page's renderer process,
 * whose threads run the page and its Web Workers) once the page has its answers.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { TOOLS } from './cached-snapshot.js';
import { CLI, openBrowser, startView } from './view-session.js';
import { PAGE_SCRIPT } from './web-bench-page.js';

interface Timed {
  wall: number;
  cpu: number;
  /** Peak resident bytes (NaN where not measured). */
  peak: number;
}

/** Preloaded into the CLI: it writes its own CPU time and peak RSS as it exits (usage-hook.ts). */
const HOOK = join(TOOLS, 'bench', 'usage-hook.js');

function cliSummary(file: string): Timed {
  const scratch = mkdtempSync(join(tmpdir(), 'memlens-first-answer-'));
  const usage = join(scratch, 'usage.json');
  try {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--import', HOOK, ...NODE_FLAGS, CLI, 'summary', file], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, MEMLENS_BENCH_USAGE: usage },
    });
    const wall = performance.now() - t0;
    if (r.status !== 0) throw new Error(`memlens summary ${file}: ${r.stderr}`);
    const u = JSON.parse(readFileSync(usage, 'utf8')) as { cpuMs: number; maxRssBytes: number };
    return { wall, cpu: u.cpuMs, peak: u.maxRssBytes };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The file's report.html, kept beside it (its gzip takes a while) with the build it was written
 * by: the page carries the app, so a report of an older build measures the older app, and is
 * written again.
 */
export function reportOf(file: string): string {
  const out = file.replace(/\.pickle$/, '.report.html');
  const key = `${out}.build`;
  const build = reportBuild();
  if (!existsSync(out) || !existsSync(key) || readFileSync(key, 'utf8') !== build) {
    process.stderr.write(`writing ${out} ...\n`);
    // Not over the old one: it may be a hard link to another worktree's copy.
    rmSync(out, { force: true });
    execFileSync(process.execPath, [...NODE_FLAGS, CLI, 'report', file, '-o', out, '--max-bytes', '4GB'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    writeFileSync(key, build);
  }
  return out;
}

/** What a report is made of: the built web app and the CLI's report chunk, by content. */
function reportBuild(): string {
  const dist = join(CLI, '..', '..');
  const web = join(dist, 'web');
  const files = [
    join(web, 'index.html'),
    ...readdirSync(join(web, 'assets')).map((f) => join(web, 'assets', f)),
    ...readdirSync(join(dist, 'cli'))
      .filter((f) => f.startsWith('bundled.report'))
      .map((f) => join(dist, 'cli', f)),
  ].sort();
  const hash = createHash('sha256');
  for (const f of files) hash.update(readFileSync(f));
  return hash.digest('hex');
}

/** This process's descendants (Linux /proc; none elsewhere): the browser's processes and the view server. */
function descendants(root: number): { pid: number; cpuMs: number }[] {
  if (!existsSync('/proc/self/stat')) return [];
  const ticks = 100; // USER_HZ on Linux
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), Number(f[1]));
      cpu.set(Number(name), ((Number(f[11]) + Number(f[12])) * 1000) / ticks);
    } catch {
      // A process that ended while /proc was read.
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = parent.get(p) ?? 0, hops++)
      if (p === root) return true;
    return false;
  };
  return [...cpu].filter(([pid]) => pid !== root && inTree(pid)).map(([pid, cpuMs]) => ({ pid, cpuMs }));
}

/** CPU milliseconds this process's descendants have used (NaN where /proc is missing). */
function treeCpuMs(root: number): number {
  const tree = descendants(root);
  return tree.length === 0 ? Number.NaN : tree.reduce((sum, p) => sum + p.cpuMs, 0);
}

/**
 * The tab's peak memory so far: the largest peak RSS (VmHWM) among the browser's renderer
 * processes. The page's renderer holds its document, its main thread's heap and every Web Worker
 * of it (threads of the same process); a report's embedded File lives in the browser process's
 * blob store, which this leaves out. NaN where /proc is missing.
 */
function tabPeakBytes(root: number): number {
  let peak = Number.NaN;
  for (const { pid } of descendants(root)) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const kb = Number(/VmHWM:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (!(kb * 1024 <= peak)) peak = kb * 1024;
    } catch {
      // A process that ended while /proc was read.
    }
  }
  return peak;
}

/**
 * A fresh browser on the URL: the page's times (from navigation start) of the signals named, in
 * order, each with the CPU used since launch by then and the tab's peak memory by then; then the
 * load query's sent → answered, navigation → sent, and answered → the first signal.
 */
async function pageTimes(url: string, signals: string[]): Promise<Timed[]> {
  const { browser, page } = await openBrowser();
  try {
    const before = treeCpuMs(process.pid);
    await page.addInitScript({ content: PAGE_SCRIPT });
    await page.goto(url);
    const out: Timed[] = [];
    for (const signal of signals) {
      const wall = await signalTime(page, signal);
      out.push({ wall, cpu: treeCpuMs(process.pid) - before, peak: tabPeakBytes(process.pid) });
    }
    // The worker's part: the load query, sent to answered (fetch or read, decode, model).
    const queries = (await page.evaluate('window.__bench.queries')) as {
      query: string;
      sent: number;
      done: number | null;
    }[];
    const load = queries.find((q) => q.query === 'load' && q.done !== null);
    const wall = (ms: number | undefined): Timed => ({
      wall: ms ?? Number.NaN,
      cpu: Number.NaN,
      peak: Number.NaN,
    });
    out.push(wall(load && load.done! - load.sent));
    // Where the rest of the first signal's time went: before the load was asked for (the page's
    // start), and after it was answered (the worker's first analysis or timeline query).
    out.push(wall(load?.sent));
    out.push(wall(load && out[0]!.wall - load.done!));
    return out;
  } finally {
    await browser.close();
  }
}

/** When the page script's signal fired (performance.now(): 0 is navigation start). */
async function signalTime(page: Page, signal: string): Promise<number> {
  return (await page.evaluate(`window.__bench.${signal}`)) as number;
}

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sec = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : '—');
const mib = (bytes: number): string => (Number.isFinite(bytes) ? `${Math.round(bytes / 2 ** 20)} MiB` : '—');

/** The table: each figure's median wall and CPU time, and its ratio to the CLI's summary in the same rounds. */
export async function firstAnswerTable(file: string, title: string, rounds: number): Promise<string> {
  const report = pathToFileURL(reportOf(file)).href;
  const view = await startView(file);
  const rows = new Map<string, Timed[]>();
  const note = (name: string, t: Timed) => {
    rows.set(name, [...(rows.get(name) ?? []), t]);
    process.stderr.write(`  ${name}: ${sec(t.wall)} (cpu ${sec(t.cpu)}, peak ${mib(t.peak)})\n`);
  };
  try {
    for (let r = 0; r < rounds; r++) {
      process.stderr.write(`${title}: round ${r + 1}/${rounds}\n`);
      note('CLI `summary`', cliSummary(file));
      for (const [where, url] of [
        ['served', view.url],
        ['report.html', report],
      ] as const) {
        const [first, all, load, sent, after] = await pageTimes(url, ['firstFinding', 'allFindings']);
        note(`${where}: first finding`, first!);
        note(`${where}: all findings in`, all!);
        note(`${where}: its load query (sent → answered)`, load!);
        note(`${where}: navigation → load query sent`, sent!);
        note(`${where}: load answered → first finding`, after!);
        // The timeline tab on its own, as a link to it opens: its outline, then every allocation stacked.
        const [outline, stacked, , , afterLoad] = await pageTimes(`${url}#tab=timeline`, [
          'firstTimeline',
          'timelineStacked',
        ]);
        note(`${where}: first timeline`, outline!);
        note(`${where}: first timeline, stacked`, stacked!);
        note(`${where}: load answered → first timeline`, afterLoad!);
      }
    }
  } finally {
    await view.stop();
  }
  const base = rows.get('CLI `summary`')!;
  const lines = [
    `| ${title}, median of ${rounds} | wall | × summary (wall) | CPU | × summary (CPU) | peak memory (CLI: RSS; page: its tab's renderer) |`,
    '|---|---|---|---|---|---|',
  ];
  for (const [name, t] of rows) {
    const wall = median(t.map((x) => x.wall));
    const cpu = median(t.map((x) => x.cpu));
    const peak = median(t.map((x) => x.peak));
    // Each round's ratio to that round's summary, then their median: the machine's load moves both.
    const xWall = median(t.map((x, i) => x.wall / base[i]!.wall));
    const xCpu = median(t.map((x, i) => x.cpu / base[i]!.cpu));
    const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '—');
    lines.push(`| ${name} | ${sec(wall)} | ${times(xWall)} | ${sec(cpu)} | ${times(xCpu)} | ${mib(peak)} |`);
  }
  return `${lines.join('\n')}\n`;
}
