import { formatBytes, formatCount } from '../../format.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { noOomEntryText, type OomReport, oomReports } from '../oom/oom.js';
import { hasHistory } from '../views/timeline/timeline-axis.js';
import { type Finding, type Outcome, siteBytes, siteFrames } from './finding.js';

/** The largest sites listed as holding memory at the OOM (the oom analysis lists more). */
const HELD_SITES = 3;

/**
 * The trace's first OOM, with the oom analysis's verdict and arithmetic, the failing request's
 * stack and what held memory at that moment. Later OOMs are counted, not repeated.
 */
export function oomFinding(s: Snapshot, d: DeviceModel, command: string, capacity?: number): Outcome {
  const reports = oomReports(s, d, capacity).filter((r) => r.entry >= 0);
  const r = reports[0];
  // The window's size goes with the claim: "no OOM" in 1 entry says little.
  const clear = noOomEntryText(s, d);
  if (r === undefined) return { findings: [], clear: hasHistory(d) ? clear : null };
  const [lead = r.headline, ...figures] = r.explanation;
  const held = r.held.sites.slice(0, HELD_SITES).map((g) => `held then: ${siteBytes(g)}`);
  const categories = r.held.categories.map((c) => `${c.category.replace(/_/g, ' ')} ${formatBytes(c.bytes)}`);
  if (categories.length > 0) held.push(`held then, by category: ${categories.join(', ')}`);
  const evidence = [lead, ...held, ...figures];
  for (const setting of r.settings) evidence.push(`would help: ${setting}`);
  if (reports.length > 1) evidence.push(`${formatCount(reports.length - 1)} more OOMs follow in the trace`);
  const finding: Finding = {
    kind: 'oom',
    headline: `Out of memory at entry ${formatCount(r.entry)} (a ${formatBytes(r.requested_bytes)} request) — ${verdictSentence(r)}`,
    evidence,
    frames: siteFrames(r.stack),
    figures: {
      entry: r.entry,
      verdict: r.verdict,
      requested_bytes: r.requested_bytes,
      device_free_bytes: r.device_free_bytes,
      reserved_bytes: r.reserved_bytes,
      allocated_bytes: r.allocated_bytes,
      cached_free_bytes: r.cached_free_bytes,
      largest_free_block: r.largest_free_block,
      outside_bytes: r.outside_bytes,
      ooms: reports.length,
      deciding_capacity_bytes: r.deciding_capacity_bytes,
    },
    command,
    show: { view: 'timeline', entry: r.entry, alloc: null, search: '' },
  };
  return { findings: [finding], clear: null };
}

/**
 * The oom report's headline, but for fragmentation, where the report compares two sizes that
 * round alike in exact bytes ("1,126,170,624 B < 1,128,267,776 B"): a glance wants "2.00 MiB short".
 */
function verdictSentence(r: OomReport): string {
  if (r.verdict !== 'fragmentation') return r.headline;
  const fb = formatBytes;
  const largest =
    fb(r.largest_free_block) === fb(r.requested_bytes)
      ? `${fb(r.requested_bytes - r.largest_free_block)} short`
      : fb(r.largest_free_block);
  return `fragmentation: ${fb(r.cached_free_bytes)} sat free in reserved segments of the ${r.pool} pool, but no block the request could use was large enough (the largest was ${largest}).`;
}
