import { formatBytes, formatCount, plural } from '../../format.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type DeviceLeaks, type LeakGroup, leaksOf, siteText } from '../leaks/leaks.js';
import { hasHistory } from '../views/timeline/timeline-axis.js';
import { type Finding, type Outcome, siteFrames } from './finding.js';

/** Sites the leaks analysis found accumulating, most held first; the rest are in `memlens leaks`. */
const MAX_LEAK_FINDINGS = 3;
/** The leaks analysis's default: a site must hold allocations from this many iterations. */
const MIN_ITERATIONS = 3;

/**
 * The leaks analysis's accumulating sites, one finding each; when it could not judge (no
 * iterations), a warning that says so, since silence would read as "no leak".
 */
export function leakFindings(s: Snapshot, d: DeviceModel, file: string): Outcome {
  if (!hasHistory(d)) return { findings: [], clear: null };
  const r = leaksOf(s, d);
  const command = `memlens leaks ${file}`;
  const leaks = r.groups.filter((g) => g.accumulating).slice(0, MAX_LEAK_FINDINGS);
  if (leaks.length > 0) return { findings: leaks.map((g) => leak(g, r, command)), clear: null };
  if (r.iterations.count <= MIN_ITERATIONS) return { findings: [unjudged(r, command)], clear: null };
  return {
    findings: [],
    clear: `no allocation site accumulates over ${formatCount(r.iterations.count)} iterations`,
  };
}

function leak(g: LeakGroup, r: DeviceLeaks, command: string): Finding {
  const newest = g.held_examples[g.held_examples.length - 1];
  const f = g.frames[0];
  const growth = r.allocated_growth_bytes_per_iteration;
  const evidence = [
    `${formatCount(g.held_count)} of its ${formatCount(g.count)} allocations that outlived their iteration are still held at the dump`,
    `held allocations come from ${formatCount(g.iterations.length)} iterations, ${g.first_iteration}–${g.last_iteration} (iterations from ${r.iterations.marker})`,
  ];
  if (growth !== null)
    evidence.push(
      `allocated memory at the end of each iteration grows by ${formatBytes(growth)} per iteration`,
    );
  return {
    kind: 'leak',
    headline: `Leak: ${siteText(g.frames)} keeps ${formatBytes(g.bytes_per_iteration)} per iteration; ${formatBytes(g.held_bytes)} from ${formatCount(g.iterations.length)} iterations is still held.`,
    evidence,
    frames: siteFrames(g.frames),
    figures: {
      bytes_per_iteration: g.bytes_per_iteration,
      held_bytes: g.held_bytes,
      held_count: g.held_count,
      iterations: g.iterations.length,
      allocated_growth_bytes_per_iteration: growth,
    },
    command,
    show: {
      view: 'timeline',
      entry: newest?.entry ?? 0,
      alloc: newest?.allocation ?? null,
      search: f === undefined ? '' : `${f.name} (${f.filename}:${f.line})`,
    },
  };
}

/** Too few iterations (none found, or too few to see anything accumulate): the leak question stays open. */
function unjudged(r: DeviceLeaks, command: string): Finding {
  const why =
    r.iterations.count === 0
      ? 'no iteration markers were found'
      : `only ${plural(r.iterations.count, 'iteration')} ${r.iterations.count === 1 ? 'was' : 'were'} found, too few to see anything accumulate`;
  return {
    kind: 'warning',
    headline: `Leaks could not be judged: ${why}; name the step with --marker NAME or a window with --range A:B.`,
    evidence: [`iterations from: ${r.iterations.marker}`],
    frames: [],
    figures: { iterations: 0 },
    command,
    show: { view: 'overview' },
  };
}
