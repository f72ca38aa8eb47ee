import { formatBytes, formatCount } from '../../base/format.js';
import { hasHistory } from '../../derived/state/has-history.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { siteText } from '../leaks/leaks.js';
import { noOomEntryText, type OomReport, oomReports } from '../oom/oom.js';
import { type Finding, type Outcome, siteBytes, siteFrames } from './finding.js';

/** The largest sites listed as holding memory at the OOM (the oom analysis lists more). */
const HELD_SITES = 3;
/** Entries of a repeated OOM listed in its evidence (the count says how many in all). */
const ENTRIES_LISTED = 5;

/**
 * Every OOM of the trace, one finding per distinct failure (the same request from the same code
 * with the same verdict is one finding, with its count and entries), with the oom analysis's
 * verdict and arithmetic, the failing request's stack and what held memory at the first of them.
 */
export function oomFindings(s: Snapshot, d: DeviceModel, command: string, capacity?: number): Outcome {
  const reports = oomReports(s, d, capacity).filter((r) => r.entry >= 0);
  // The window's size goes with the claim: "no OOM" in 1 entry says little.
  const clear = noOomEntryText(s, d);
  if (reports.length === 0) return { findings: [], clear: hasHistory(d) ? clear : null };
  return { findings: repeats(reports).map((group) => oomFinding(group, command)), clear: null };
}

/** OOMs grouped by what failed: verdict, request size, and the code that asked. */
function repeats(reports: OomReport[]): OomReport[][] {
  const groups = new Map<string, OomReport[]>();
  for (const r of reports) {
    const key = `${r.verdict}|${r.requested_bytes}|${siteText(r.stack)}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [r]);
    else group.push(r);
  }
  return [...groups.values()];
}

function oomFinding(group: OomReport[], command: string): Finding {
  const r = group[0]!;
  const [lead = r.headline, ...figures] = r.explanation;
  const held = r.held.sites.slice(0, HELD_SITES).map((g) => `held then: ${siteBytes(g)}`);
  const categories = r.held.categories.map((c) => `${c.category.replace(/_/g, ' ')} ${formatBytes(c.bytes)}`);
  if (categories.length > 0) held.push(`held then, by category: ${categories.join(', ')}`);
  const evidence = [...repeatLines(group), lead, ...stackBefore(r), ...held, ...figures];
  for (const setting of r.settings) evidence.push(`would help: ${setting}`);
  const where =
    group.length === 1
      ? `at entry ${formatCount(r.entry)} (a ${formatBytes(r.requested_bytes)} request)`
      : `${group.length} times (a ${formatBytes(r.requested_bytes)} request, first at entry ${formatCount(r.entry)})`;
  return {
    kind: 'oom',
    headline: `Out of memory ${where} — ${verdictSentence(r)}`,
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
      ooms: group.length,
      deciding_capacity_bytes: r.deciding_capacity_bytes,
    },
    command,
    show: { view: 'timeline', entry: r.entry, alloc: null, search: '' },
    severity: 'oom',
    // What failed: the request the device could not serve.
    stake_bytes: r.requested_bytes,
    ...(r.readings.length > 0 ? { readings: r.readings } : {}),
    entries: group.map((x) => x.entry),
  };
}

/** A request with no stack (a thread running no Python): the program's last stack before it. */
function stackBefore(r: OomReport): string[] {
  if (r.stack.length > 0 || r.last_stack_before === null) return [];
  return [
    `the request has no stack (the thread that asked ran no Python code, as autograd's backward threads do); the last one before it: ${siteText(r.last_stack_before.stack)}`,
  ];
}

function repeatLines(group: OomReport[]): string[] {
  if (group.length === 1) return [];
  const listed = group.slice(0, ENTRIES_LISTED).map((r) => formatCount(r.entry));
  const more =
    group.length > ENTRIES_LISTED ? `, and ${formatCount(group.length - ENTRIES_LISTED)} more` : '';
  return [
    `the same request from the same code failed ${group.length} times, with the same verdict: entries ${listed.join(', ')}${more}; the figures below are the first's`,
  ];
}

/**
 * The verdict in a clause short enough for a two-line headline; the arithmetic that proves it is
 * the evidence's first line.
 */
function verdictSentence(r: OomReport): string {
  const fb = formatBytes;
  switch (r.verdict) {
    case 'fragmentation': {
      // Two sizes that round alike ("1.05 GiB" and "1.05 GiB"): a glance wants "2.00 MiB short".
      const largest =
        fb(r.largest_free_block) === fb(r.requested_bytes)
          ? `${fb(r.requested_bytes - r.largest_free_block)} short`
          : fb(r.largest_free_block);
      return `fragmentation: ${fb(r.cached_free_bytes)} sat free in the ${r.pool} pool, but no usable block was large enough (largest ${largest}).`;
    }
    case 'exhaustion':
      return `exhaustion: live tensors held ${fb(r.allocated_bytes)} and the device had no room left for the request.`;
    case 'outside PyTorch':
      return `memory outside PyTorch: ${fb(r.outside_bytes ?? 0)} was held outside its allocator (CUDA context, NCCL, other processes).`;
    case 'not out of device memory':
      return `not out of device memory: CUDA reported ${fb(r.device_free_bytes)} free; a limit or another cudaMalloc failure refused it.`;
    case 'undetermined':
      return `undetermined: memory held outside PyTorch, unless the GPU is this small; its total memory decides.`;
    case 'would fit':
      return r.headline;
  }
}
