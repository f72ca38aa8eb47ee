/**
 * The web app's first answer on one file, against the CLI's `summary` of it, in one run (the
 * machine is shared: only ratios taken side by side mean anything). Per round, one after another:
 * `memlens summary FILE`; the served app (`memlens view`) to its first finding (the first card on
 * the Diagnosis) and, in another fresh browser, to its first painted timeline; the same two on the
 * file's `memlens report` page from file://. Wall time and CPU time (the CLI's own; the browser's
 * processes and the view server together, from /proc) of each, medians over the rounds.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { CLI, openBrowser, startView } from './view-session.js';
import { PAGE_SCRIPT } from './web-bench-page.js';

interface Timed {
  wall: number;
  cpu: number;
}

/** The CLI prints its own CPU time as it exits (user + system, ms), so no wrapper is timed with it. */
const CPU_ON_EXIT =
  'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\ncpu_ms="+(u.user+u.system)/1000+"\\n")})';

function cliSummary(file: string): Timed {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [...NODE_FLAGS, '--import', CPU_ON_EXIT, CLI, 'summary', file], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`memlens summary ${file}: ${r.stderr}`);
  return { wall, cpu: Number(/cpu_ms=([\d.]+)/.exec(r.stderr)?.[1] ?? Number.NaN) };
}

/** The first report.html of the file, made once (its gzip takes a while) and kept beside it. */
export function reportOf(file: string): string {
  const out = file.replace(/\.pickle$/, '.report.html');
  if (!existsSync(out)) {
    process.stderr.write(`writing ${out} ...\n`);
    execFileSync(process.execPath, [...NODE_FLAGS, CLI, 'report', file, '-o', out, '--max-bytes', '4GB'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return out;
}

/**
 * CPU milliseconds this process's descendants have used (Linux /proc; NaN elsewhere): the
 * browser's processes (its renderer and worker included) and the `memlens view` server.
 */
function treeCpuMs(root: number): number {
  if (!existsSync('/proc/self/stat')) return Number.NaN;
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
  let total = 0;
  for (const [pid, ms] of cpu) if (pid !== root && inTree(pid)) total += ms;
  return total;
}

/**
 * A fresh browser on the URL: the page's times (from navigation start) of the signals named, in
 * order, each with the CPU used since launch by then.
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
      out.push({ wall, cpu: treeCpuMs(process.pid) - before });
    }
    // The worker's part: the load query, sent to answered (fetch or read, decode, model).
    const queries = (await page.evaluate('window.__bench.queries')) as {
      query: string;
      sent: number;
      done: number | null;
    }[];
    const load = queries.find((q) => q.query === 'load' && q.done !== null);
    out.push({ wall: load ? load.done! - load.sent : Number.NaN, cpu: Number.NaN });
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

/** The table: each figure's median wall and CPU time, and its ratio to the CLI's summary in the same rounds. */
export async function firstAnswerTable(file: string, title: string, rounds: number): Promise<string> {
  const report = pathToFileURL(reportOf(file)).href;
  const view = await startView(file);
  const rows = new Map<string, Timed[]>();
  const note = (name: string, t: Timed) => {
    rows.set(name, [...(rows.get(name) ?? []), t]);
    process.stderr.write(`  ${name}: ${sec(t.wall)} (cpu ${sec(t.cpu)})\n`);
  };
  try {
    for (let r = 0; r < rounds; r++) {
      process.stderr.write(`${title}: round ${r + 1}/${rounds}\n`);
      note('CLI `summary`', cliSummary(file));
      for (const [where, url] of [
        ['served', view.url],
        ['report.html', report],
      ] as const) {
        const [first, all, load] = await pageTimes(url, ['firstFinding', 'allFindings']);
        note(`${where}: first finding`, first!);
        note(`${where}: all findings in`, all!);
        note(`${where}: its load query (sent → answered)`, load!);
        // The timeline tab on its own, as a link to it opens.
        note(`${where}: first timeline`, (await pageTimes(`${url}#tab=timeline`, ['firstTimeline']))[0]!);
      }
    }
  } finally {
    await view.stop();
  }
  const base = rows.get('CLI `summary`')!;
  const lines = [
    `| ${title}, median of ${rounds} | wall | × summary (wall) | CPU | × summary (CPU) |`,
    '|---|---|---|---|---|',
  ];
  for (const [name, t] of rows) {
    const wall = median(t.map((x) => x.wall));
    const cpu = median(t.map((x) => x.cpu));
    // Each round's ratio to that round's summary, then their median: the machine's load moves both.
    const xWall = median(t.map((x, i) => x.wall / base[i]!.wall));
    const xCpu = median(t.map((x, i) => x.cpu / base[i]!.cpu));
    const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '—');
    lines.push(`| ${name} | ${sec(wall)} | ${times(xWall)} | ${sec(cpu)} | ${times(xCpu)} |`);
  }
  return `${lines.join('\n')}\n`;
}
