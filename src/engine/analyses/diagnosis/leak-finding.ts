import { formatBytes, formatCount, plural } from '../../base/format.js';
import { hasHistory } from '../../derived/state/has-history.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type DeviceLeaks, type LeakGroup, leaksOf } from '../leaks/leaks.js';
import { type Finding, type Outcome, siteFrames } from './finding.js';
import { leakSite } from './leak-site.js';
import type { DeviceMemory } from './rank.js';

/** Sites the leaks analysis found accumulating, most held first; the rest are in `memlens leaks`. */
const MAX_LEAK_FINDINGS = 3;
/** The leaks analysis's default: a site must hold allocations from this many iterations. */
const MIN_ITERATIONS = 3;

/**
 * The leaks analysis's accumulating sites, one finding each; when it could not judge (no
 * iterations), a warning that says so, since silence would read as "no leak".
 */
export function leakFindings(s: Snapshot, d: DeviceModel, file: string, memory: DeviceMemory): Outcome {
  if (!hasHistory(d)) return { findings: [], clear: null };
  const r = leaksOf(s, d);
  const command = `memlens leaks ${file}`;
  const leaks = r.groups.filter((g) => g.accumulating).slice(0, MAX_LEAK_FINDINGS);
  if (leaks.length > 0)
    return {
      findings: leaks.map((g) => leakFinding(g, r, command, exhaustion(g, r, d, memory))),
      clear: null,
    };
  if (r.iterations.count <= MIN_ITERATIONS) return { findings: [unjudged(r, command)], clear: null };
  return {
    findings: [],
    clear: `no allocation site accumulates over ${formatCount(r.iterations.count)} iterations`,
  };
}

/**
 * Whether the site, at its rate, would exhaust the device within a run as long as the recorded
 * one: its growth over that many iterations more than the device left unreserved at the peak.
 * Only against a device memory the file or the user proves (a reserved peak proves none).
 */
function exhaustion(g: LeakGroup, r: DeviceLeaks, d: DeviceModel, memory: DeviceMemory): string | null {
  if (memory.from === 'peak') return null;
  const room = memory.bytes - d.totals.peak.reserved;
  const growth = g.bytes_per_iteration * r.iterations.count;
  if (growth < room) return null;
  return `at ${formatBytes(g.bytes_per_iteration)} per iteration, ${formatCount(r.iterations.count)} more iterations (as many as recorded) would take ${formatBytes(growth)}, more than the ${formatBytes(room)} the device left unreserved at the peak`;
}

/** One accumulating site as a finding; `exhausts`: the sentence saying it would fill the device, if it would. */
export function leakFinding(g: LeakGroup, r: DeviceLeaks, command: string, exhausts: string | null): Finding {
  const newest = g.held_examples[g.held_examples.length - 1];
  const f = g.frames[0];
  const growth = r.allocated_growth_bytes_per_iteration;
  const site = leakSite(g.frames);
  const evidence = [
    ...(exhausts === null ? [] : [exhausts]),
    ...site.evidence,
    `${formatCount(g.held_count)} of its ${formatCount(g.count)} allocations that outlived their iteration are still held at the dump`,
    `held allocations come from ${formatCount(g.iterations.length)} iterations, ${g.first_iteration}–${g.last_iteration} (iterations from ${r.iterations.marker})`,
  ];
  // The site's growth and the device's total are two figures: when they disagree, both are said.
  const falls = growth !== null && growth < 0;
  if (growth !== null)
    evidence.push(
      falls
        ? `allocated memory overall falls by ${formatBytes(-growth)} per iteration at the end of each iteration: other memory was freed faster than this site keeps`
        : `allocated memory at the end of each iteration grows by ${formatBytes(growth)} per iteration`,
    );
  const meanwhile = falls ? ', while allocated memory overall falls' : '';
  return {
    kind: 'leak',
    headline: `Leak: ${site.text} keeps ${formatBytes(g.bytes_per_iteration)} per iteration; ${formatBytes(g.held_bytes)} from ${formatCount(g.iterations.length)} iterations is still held${meanwhile}.`,
    evidence,
    frames: siteFrames(g.frames),
    figures: {
      bytes_per_iteration: g.bytes_per_iteration,
      held_bytes: g.held_bytes,
      held_count: g.held_count,
      iterations: g.iterations.length,
      allocated_growth_bytes_per_iteration: growth,
      // At its rate, over as many iterations as were recorded (severity 'exhausts' when that fills the device).
      growth_over_run_bytes: g.bytes_per_iteration * r.iterations.count,
    },
    command,
    show: {
      view: 'timeline',
      entry: newest?.entry ?? 0,
      alloc: newest?.allocation ?? null,
      search: f === undefined ? '' : `${f.name} (${f.filename}:${f.line})`,
    },
    severity: exhausts === null ? 'cost' : 'exhausts',
    stake_bytes: g.held_bytes,
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
    severity: 'note',
    stake_bytes: 0,
  };
}
