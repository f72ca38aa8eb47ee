import { formatBytes, formatCount, plural } from '../../base/format.js';
import { hasHistory } from '../../derived/state/has-history.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { categoryBytesAfter } from '../categories/category-at.js';
import { siteText } from '../leaks/leaks.js';
import { peakOf } from '../peak/peak.js';
import { type Finding, siteBytes, siteFrames } from './finding.js';

/**
 * What held memory at the allocated peak (the dump when the file has no trace): the peak
 * analysis's largest sites and the categories' split at the same moment.
 */
export function peakFinding(s: Snapshot, d: DeviceModel, file: string): Finding[] {
  const p = peakOf(s, d, { top: 3 });
  if (p.live_allocations === 0) return [];
  const traced = hasHistory(d);
  const cats = categoryBytesAfter(s, d, d.totals.peakAllocatedAt)
    .filter((c) => c.bytes > 0)
    .sort((x, y) => y.bytes - x.bytes);
  const top = p.groups.find((g) => g.frames.length > 0);
  const when = !traced
    ? 'At the dump'
    : p.after_entry < 0
      ? 'At the allocated peak (before the first trace entry)'
      : `At the allocated peak (entry ${formatCount(p.after_entry)})`;
  // One detail, to keep the headline to two lines: the largest site, else the largest category
  // (the evidence has both splits). Memory with no recorded stack (allocated before recording)
  // can dwarf every site that has one.
  const detail =
    p.unknown_stack_bytes > (top?.bytes ?? 0)
      ? `: ${formatBytes(p.unknown_stack_bytes)} of it with no stack recorded`
      : top !== undefined
        ? `: largest site ${siteText(top.frames)} with ${formatBytes(top.bytes)}`
        : cats[0] !== undefined && cats[0].category !== 'unknown'
          ? `: largest category ${words(cats[0].category)} (${formatBytes(cats[0].bytes)})`
          : '';
  const evidence = p.groups.map(siteBytes);
  if (p.other_groups > 0)
    evidence.push(`${formatBytes(p.other_bytes)} from ${plural(p.other_groups, 'more site')}`);
  if (cats.length > 0)
    evidence.push(
      `by category: ${cats.map((c) => `${words(c.category)} ${formatBytes(c.bytes)}`).join(', ')} (memlens categories shows them over time)`,
    );
  if (traced && p.peak_reserved_bytes > p.reserved_bytes)
    evidence.push(
      `reserved memory peaked at ${formatBytes(p.peak_reserved_bytes)} after entry ${formatCount(p.peak_reserved_after_entry)}`,
    );
  return [
    {
      kind: 'peak',
      headline: `${when} ${formatBytes(p.allocated_bytes)} was allocated of ${formatBytes(p.reserved_bytes)} reserved${detail}.`,
      evidence,
      frames: siteFrames(top?.frames ?? []),
      figures: {
        entry: p.after_entry,
        allocated_bytes: p.allocated_bytes,
        reserved_bytes: p.reserved_bytes,
        peak_reserved_bytes: p.peak_reserved_bytes,
        live_allocations: p.live_allocations,
        top_site_bytes: top?.bytes ?? null,
        top_category: cats[0]?.category ?? null,
      },
      command:
        traced && p.after_entry >= 0
          ? `memlens peak ${file} --at ${formatCount(p.after_entry)}`
          : `memlens peak ${file}`,
      show: { view: 'flame' },
      severity: 'context',
      stake_bytes: p.allocated_bytes,
    },
  ];
}

/** optimizer_state -> optimizer state */
function words(category: string): string {
  return category.replace(/_/g, ' ');
}
