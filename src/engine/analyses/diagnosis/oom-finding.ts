import { formatBytes, formatCount } from '../../format.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { Sites } from '../frames/sites.js';
import { type OomReport, oomReports } from '../oom/oom.js';
import { peakOf } from '../peak/peak.js';
import { type Finding, type Outcome, siteBytes, siteFrames } from './finding.js';

/**
 * The trace's first OOM, with the oom analysis's verdict and arithmetic, the failing request's
 * stack and what held memory at that moment. Later OOMs are counted, not repeated.
 */
export function oomFinding(s: Snapshot, d: DeviceModel, command: string, capacity?: number): Outcome {
  const reports = oomReports(s, d, capacity).filter((r) => r.entry >= 0);
  const r = reports[0];
  if (r === undefined) return { findings: [], clear: d.trace.length > 0 ? 'no OOM in the trace' : null };
  const sites = new Sites(s.stacks, false);
  const frames = sites.frames(sites.of(d.trace.stack[r.entry]!));
  const held = peakOf(s, d, { at: r.entry, top: 3 });
  const [lead = r.verdict, ...figures] = r.explanation;
  const evidence = [lead, ...held.groups.map((g) => `held then: ${siteBytes(g)}`), ...figures];
  for (const setting of r.settings) evidence.push(`would help: ${setting}`);
  if (reports.length > 1) evidence.push(`${formatCount(reports.length - 1)} more OOMs follow in the trace`);
  const finding: Finding = {
    kind: 'oom',
    headline: headlineOf(r),
    evidence,
    frames: siteFrames(frames),
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
    },
    command,
    show: { view: 'timeline', entry: r.entry, alloc: null, search: '' },
  };
  return { findings: [finding], clear: null };
}

/** The cause first, then the request and the figure that decides it. */
function headlineOf(r: OomReport): string {
  const fb = formatBytes;
  const request = `a ${fb(r.requested_bytes)} request at entry ${formatCount(r.entry)}`;
  switch (r.verdict as string) {
    case 'fragmentation': {
      const short = r.requested_bytes - r.largest_free_block;
      const largest =
        fb(r.largest_free_block) === fb(r.requested_bytes) ? `${fb(short)} short` : fb(r.largest_free_block);
      return `Out of memory from fragmentation: ${request} failed while ${fb(r.cached_free_bytes)} sat free in reserved segments, but in no block large enough (the largest was ${largest}).`;
    }
    case 'exhaustion':
      return `Out of memory from exhaustion: ${request} failed with ${fb(r.reserved_bytes)} reserved by PyTorch (${fb(r.allocated_bytes)} allocated) and ${fb(r.device_free_bytes)} free on the device.`;
    case 'outside PyTorch':
      return `Out of memory from memory held outside PyTorch: ${fb(r.outside_bytes ?? 0)} of the GPU was not PyTorch's when ${request} failed.`;
    case 'not out of device memory':
      return `Out of memory, but not of device memory: ${request} failed while CUDA reported ${fb(r.device_free_bytes)} free.`;
    default:
      return `Out of memory (${r.verdict}): ${request} failed.`;
  }
}
