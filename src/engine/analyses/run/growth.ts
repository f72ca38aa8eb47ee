/**
 * What grows across a run: per rank, the live bytes at each window's dump by allocating site
 * (a dump's segments hold everything alive, whatever window allocated it), and the sites whose
 * bytes grow window after window (seed 000's cross-step leak), with the ranks where they grow.
 */
import type { Frame } from '../../model/stack-table.js';
import type { SiteSide } from '../diff/diff-side.js';
import type { CellResult } from './cell-result.js';
import { type RunRow, windowRows } from './run-table.js';

export interface RankGrowth {
  replica: number | null;
  rank: number;
  device: number;
  /** The run table's lane (run-table.ts), and how it is named. */
  lane: string;
  lane_label: string;
  /** The first window whose dump holds the site. */
  first_step: number;
  /** Live bytes at each dump, in window order (0 where absent), and the windows' first steps. */
  steps: number[];
  bytes: number[];
  counts: number[];
  /** Growth from the first window holding it to the last, per step. */
  bytes_per_step: number;
}

export interface GrowingSite {
  /** Innermost first, the user's frames. */
  frames: Frame[];
  ranks: RankGrowth[];
  /** Bytes gained per step, summed over the ranks where it grows. */
  bytes_per_step: number;
}

/** Fewest windows that can show growth "window after window". */
const MIN_WINDOWS = 3;

export function runGrowth(rows: RunRow[], results: Map<string, CellResult>): GrowingSite[] {
  const bySite = new Map<string, GrowingSite>();
  for (const mine of byRank(windowRows(rows))) {
    const series = siteSeries(mine, results);
    for (const [key, s] of series) {
      const g = growthOf(mine, s);
      if (g === null) continue;
      const site = bySite.get(key) ?? { frames: s.frames, ranks: [], bytes_per_step: 0 };
      site.ranks.push(g);
      site.bytes_per_step += g.bytes_per_step;
      bySite.set(key, site);
    }
  }
  return [...bySite.values()].sort((a, b) => b.bytes_per_step - a.bytes_per_step);
}

/** Whether growth window after window can show at all: some rank has MIN_WINDOWS step windows. */
export function growthCanShow(rows: RunRow[]): boolean {
  return byRank(windowRows(rows)).some((windows) => windows.length >= MIN_WINDOWS);
}

function byRank(rows: RunRow[]): RunRow[][] {
  const m = new Map<string, RunRow[]>();
  for (const r of rows) m.set(r.lane, [...(m.get(r.lane) ?? []), r]);
  return [...m.values()].map((list) => list.sort((a, b) => a.steps!.first - b.steps!.first));
}

interface Series {
  frames: Frame[];
  bytes: number[];
  counts: number[];
}

export function siteKey(frames: readonly Frame[]): string {
  return frames.map((f) => `${f.filename}:${f.line}:${f.name}`).join('\n');
}

/** Each site's live bytes and count at every dump of one rank. */
function siteSeries(windows: RunRow[], results: Map<string, CellResult>): Map<string, Series> {
  const out = new Map<string, Series>();
  windows.forEach((row, i) => {
    const device = results.get(row.file)?.side.devices.find((d) => d.device === row.device);
    for (const s of device?.at_dump.sites ?? []) addSite(out, s, i, windows.length);
  });
  return out;
}

function addSite(out: Map<string, Series>, s: SiteSide, i: number, n: number): void {
  const key = siteKey(s.frames);
  let series = out.get(key);
  if (series === undefined) {
    series = { frames: s.frames, bytes: new Array(n).fill(0), counts: new Array(n).fill(0) };
    out.set(key, series);
  }
  series.bytes[i]! += s.bytes;
  series.counts[i]! += s.count;
}

/**
 * A site grows when, from the first window holding it, its live allocations never shrink and
 * their number rises in at least three of four steps (a tensor kept per step), or its bytes rise
 * at every step over four windows or more (one buffer re-grown larger). Sizes that merely vary
 * with the batch keep their count and do not rise at every step.
 */
function growthOf(windows: RunRow[], s: Series): RankGrowth | null {
  const from = s.counts.findIndex((c) => c > 0);
  if (from < 0) return null;
  const bytes = s.bytes.slice(from);
  const counts = s.counts.slice(from);
  if (bytes.length < MIN_WINDOWS) return null;
  const steps = windows.slice(from).map((r) => r.steps!.first);
  const transitions = bytes.length - 1;
  const never = (xs: number[]) => xs.every((x, i) => i === 0 || x >= xs[i - 1]!);
  const rises = (xs: number[]) => xs.filter((x, i) => i > 0 && x > xs[i - 1]!).length;
  const kept = never(counts) && never(bytes) && rises(counts) >= Math.ceil(0.75 * transitions);
  const regrown = bytes.length >= 4 && rises(bytes) === transitions;
  if (!(kept || regrown) || bytes.at(-1)! <= bytes[0]!) return null;
  const row = windows[from]!;
  return {
    replica: row.replica,
    rank: row.rank,
    device: row.device,
    lane: row.lane,
    lane_label: row.lane_label,
    first_step: steps[0]!,
    steps,
    bytes,
    counts,
    bytes_per_step: (bytes.at(-1)! - bytes[0]!) / Math.max(1, steps.at(-1)! - steps[0]!),
  };
}
