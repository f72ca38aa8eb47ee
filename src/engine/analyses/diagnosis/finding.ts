import { formatBytes, plural } from '../../base/format.js';
import type { SiteGroup } from '../../derived/frames/sites.js';
import type { Frame } from '../../model/stack-table.js';
import { siteText } from '../leaks/leaks.js';
import type { OomReading } from '../oom/verdict.js';

/**
 * What a finding's outcome was, worst first: the order findings are ranked in before their bytes
 * at stake. An OOM ended the run; growth that would exhaust the device within a run as long as
 * the recorded one comes next; then memory a problem cost (leaks, GC bursts, fragmentation);
 * then what held memory (the peak); then what the file cannot tell.
 */
export const SEVERITIES = ['oom', 'exhausts', 'cost', 'context', 'note'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The kinds, in the order a tie of severity and bytes at stake is listed in. */
export const FINDING_KINDS = ['oom', 'leak', 'gc', 'fragmentation', 'peak', 'warning'] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/**
 * Where the web app shows a finding's proof: the timeline at an entry (with an allocation pinned
 * or a frame searched), the Events table over a range of entries, a segment in the pool state,
 * the flame graph at the allocated peak, or the Overview's warnings.
 */
export type FindingView =
  | { view: 'timeline'; entry: number; alloc: number | null; search: string }
  | { view: 'events'; first: number; last: number }
  | { view: 'pool'; entry: number; segment: number }
  | { view: 'flame' }
  | { view: 'overview' };

/** A frame as findings print it (no extra keys: they go to JSON as they are). */
export interface SiteFrame {
  name: string;
  filename: string;
  line: number;
}

/**
 * One thing the file says happened to GPU memory: a one-sentence headline with its evidence
 * figure, the lines behind it, the stack it is about, and where to look next.
 */
export interface Finding {
  kind: FindingKind;
  headline: string;
  /** The figures behind the headline, one line each. */
  evidence: string[];
  /** The request's or the site's stack, innermost first, the user's frames only. */
  frames: SiteFrame[];
  /** The figures as numbers, named as the analysis names them. */
  figures: Record<string, number | string | null>;
  /** The CLI command that shows the detail. */
  command: string;
  show: FindingView;
  /** How bad its outcome was (ranked first), then how many bytes it put at stake (ranked next). */
  severity: Severity;
  stake_bytes: number;
  /** An OOM whose verdict the GPU's total memory decides: each reading with the GPU it holds for. */
  readings?: OomReading[];
  /** An OOM's: every oom entry of its group (the same request failing again), first to last. */
  entries?: number[];
}

/**
 * What one finding module concluded: its findings, and when it looked and found nothing, that
 * in words ("no OOM in the trace"), so a clean file says what was checked rather than nothing.
 */
export interface Outcome {
  findings: Finding[];
  clear: string | null;
}

export function siteFrames(frames: Frame[], max = 8): SiteFrame[] {
  return frames.slice(0, max).map(({ name, filename, line }) => ({ name, filename, line }));
}

/** A file name as a shell word: quoted when it holds anything a shell would read. */
export function shellWord(file: string): string {
  return /^[\w./,:@%+=-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`;
}

/** "938 MiB in 2 allocations from forward (model.py:174)": a site's share, as findings cite it. */
export function siteBytes(g: SiteGroup): string {
  const where = g.frames.length === 0 ? 'with no stack recorded' : `from ${siteText(g.frames)}`;
  return `${formatBytes(g.bytes)} in ${plural(g.count, 'allocation')} ${where}`;
}
