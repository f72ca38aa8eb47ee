import { formatBytes, formatCount, plural } from '../../base/format.js';
import { hasHistory } from '../../derived/state/has-history.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { citationText, citeWindowCycles, type WindowCycle } from '../cycles/burst-cycles.js';
import { type DeviceGc, type GcBurst, gcBurstsOf } from '../gc/gc-bursts.js';
import { burstLivedText } from '../gc/gc-words.js';
import { siteText } from '../leaks/leaks.js';
import { type Finding, type Outcome, siteFrames } from './finding.js';

/** An unconfirmed burst below this share of the reserved peak ranks as context, not as a cost. */
const MATERIAL_SHARE = 0.01;

/**
 * Bursts of frees of long-lived allocations, when their stacks go through Python's garbage
 * collector or cannot show it; bursts that code freed on purpose are no finding.
 */
export function gcFinding(s: Snapshot, d: DeviceModel, file: string, cycles: WindowCycle[] = []): Outcome {
  if (!hasHistory(d)) return { findings: [], clear: null };
  const r = gcBurstsOf(s, d);
  const viaGc = r.bursts.filter((b) => b.through_gc);
  const unknown = r.bursts.filter(
    (b) => !b.through_gc && !b.free_stacks_have_cpp && b.freed_by_code === null,
  );
  const bursts = viaGc.length > 0 ? viaGc : unknown;
  if (bursts.length === 0)
    return {
      findings: [],
      clear:
        r.bursts.length === 0
          ? 'no burst of long-lived frees'
          : 'no burst of long-lived frees through the garbage collector (code freed the ones found)',
    };
  const largest = bursts.reduce((x, y) => (y.bytes > x.bytes ? y : x));
  const total = bursts.reduce((n, b) => n + b.bytes, 0);
  const every =
    r.period_iterations !== null && bursts.length > 1 ? `, every ~${r.period_iterations} iterations` : '';
  const count = plural(bursts.length, 'burst');
  const headline =
    viaGc.length > 0
      ? `Python's garbage collector freed long-lived tensors at once in ${count}${every} (largest ${formatBytes(largest.bytes)}): reference cycles held them until a collection.`
      : `Long-lived tensors were freed at once in ${count}${every} (largest ${formatBytes(largest.bytes)}), as the garbage collector frees reference cycles (no C++ frames in the free stacks to confirm it).`;
  const finding: Finding = {
    kind: 'gc',
    headline,
    evidence: [
      ...patternLines(r, viaGc.length > 0),
      ...evidenceOf(largest, total, bursts.length, cycleLines(s, file, r, r.bursts.indexOf(largest), cycles)),
    ],
    frames: siteFrames(largest.groups[0]?.frames ?? []),
    figures: {
      bursts: bursts.length,
      bytes: total,
      largest_burst_bytes: largest.bytes,
      largest_burst_entry: largest.entry,
      period_iterations: r.period_iterations,
      through_gc: viaGc.length,
    },
    command: `memlens gc ${file}`,
    show: { view: 'events', first: largest.entry, last: largest.last_entry },
    // What the collector's lateness cost at once: the memory the largest burst held until then.
    // A burst the stacks cannot tie to the collector, and too small to matter, is no cost the
    // file proves: it ranks by its bytes among what held memory, not above the peak.
    severity:
      viaGc.length > 0 || largest.bytes >= MATERIAL_SHARE * d.totals.peak.reserved ? 'cost' : 'context',
    stake_bytes: largest.bytes,
  };
  return { findings: [finding], clear: null };
}

/** The gc analysis's largest pattern of repeated bursts (of the collector's, when it shows). */
function patternLines(r: DeviceGc, viaGc: boolean): string[] {
  const p = r.patterns.find((x) => !viaGc || x.through_gc > 0);
  if (p === undefined) return [];
  const every = p.period_iterations !== null ? ` every ~${p.period_iterations} iterations` : '';
  return [
    `${plural(p.count, 'burst')}${every} free the same sites, ${formatBytes(p.bytes.median)} each (median), entries ${formatCount(p.first_entry)}–${formatCount(p.last_entry)}`,
  ];
}

/**
 * The recorded cycles (memlens record --cycles) the largest burst freed, in words, and how many
 * the other bursts freed: what the trace can only infer, the recorder saw.
 */
function cycleLines(
  s: Snapshot,
  file: string,
  r: DeviceGc,
  largest: number,
  cycles: WindowCycle[],
): string[] {
  const [cited] = citeWindowCycles(s, file, [r], cycles);
  const others = cited!.reduce((n, list, i) => n + (i === largest ? 0 : list.length), 0);
  return [
    ...cited![largest]!.map(citationText),
    ...(others > 0
      ? [`${plural(others, 'recorded cycle')} freed by the other bursts (memlens cycles lists them)`]
      : []),
  ];
}

function evidenceOf(b: GcBurst, total: number, n: number, cycles: string[]): string[] {
  const out = [
    `largest burst: entries ${formatCount(b.entry)}–${formatCount(b.last_entry)}, ${formatCount(b.count)} allocations (${formatBytes(b.bytes)}) that had lived ${burstLivedText(b)}`,
    ...cycles,
  ];
  const site = b.groups[0];
  if (site !== undefined && site.frames.length > 0)
    out.push(`allocated at ${siteText(site.frames)} (${formatBytes(site.bytes)} of the burst)`);
  if (b.free_frames.length > 0) out.push(`freed from ${siteText(b.free_frames)}`);
  if (n > 1) out.push(`${formatBytes(total)} freed in all bursts`);
  return out;
}
