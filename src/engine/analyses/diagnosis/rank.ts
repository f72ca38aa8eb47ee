import { formatBytes } from '../../base/format.js';
import type { DeviceModel } from '../../model/snapshot.js';
import { FINDING_KINDS, type Finding, SEVERITIES } from './finding.js';

/**
 * The device memory bytes at stake are weighed against: the GPU's total memory when given, else
 * the most the file proves the device had (reserved + what CUDA reported free at an OOM, or the
 * reserved peak if more: a lower bound), else the reserved peak (the device's own scale, so devices of one file still compare).
 */
export interface DeviceMemory {
  bytes: number;
  /** capacity: as given; oom: reserved + CUDA free at an OOM (at least that much); peak: reserved peak only. */
  from: 'capacity' | 'oom' | 'peak';
}

export function deviceMemory(d: DeviceModel, capacity?: number): DeviceMemory {
  if (capacity !== undefined) return { bytes: capacity, from: 'capacity' };
  const free = d.trace.deviceFree;
  let seen = 0;
  if (free !== undefined) {
    // Reserved bytes at the few entries that say what CUDA had free (OOMs), not the whole curve.
    const at: number[] = [];
    for (let i = 0; i < d.trace.length; i++) if (free[i]! > 0) at.push(i);
    const reserved = d.totals.curvesAfterEach(at).reserved;
    at.forEach((i, k) => {
      seen = Math.max(seen, reserved[k]! + free[i]!);
    });
  }
  // An OOM's reading proves the device at least that large; one below the reserved peak (memory
  // given back, or taken by another process, since) proves no more than the peak itself, so it
  // says nothing of the room left beyond it.
  if (seen >= d.totals.peak.reserved && seen > 0) return { bytes: seen, from: 'oom' };
  return { bytes: Math.max(1, d.totals.peak.reserved), from: 'peak' };
}

/** A finding's share of its device's memory, the second key of the ranking. */
function share(f: Finding, memory: number): number {
  return f.stake_bytes / memory;
}

/** Worst first: outcome, then bytes at stake relative to the device, then the kinds' order. */
export function compareFindings(a: Finding, aMemory: number, b: Finding, bMemory: number): number {
  return (
    SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity) ||
    share(b, bMemory) - share(a, aMemory) ||
    FINDING_KINDS.indexOf(a.kind) - FINDING_KINDS.indexOf(b.kind)
  );
}

/** A finding of the overall order: its device and its place in that device's list. */
export interface RankedFinding {
  device: number;
  finding: number;
}

interface Ranked {
  device: number;
  memory: DeviceMemory;
  findings: Finding[];
}

/** Every finding of every device, worst first (a stable sort: ties keep device order). */
export function rankAcross(devices: Ranked[]): RankedFinding[] {
  const all = devices.flatMap((d) =>
    d.findings.map((f, finding) => ({ f, memory: d.memory.bytes, at: { device: d.device, finding } })),
  );
  all.sort((x, y) => compareFindings(x.f, x.memory, y.f, y.memory));
  return all.map((x) => x.at);
}

/** "568 MiB at stake, 0.7% of the device's 80.0 GiB": what a finding puts at risk, in words. */
export function stakeText(f: Finding, memory: DeviceMemory): string {
  if (f.stake_bytes <= 0) return '';
  const pct = (100 * f.stake_bytes) / memory.bytes;
  const of =
    memory.from === 'capacity'
      ? `${percent(pct)} of the device's ${formatBytes(memory.bytes)}`
      : memory.from === 'oom'
        ? `${percent(pct)} of the ${formatBytes(memory.bytes)} the device had at least`
        : `${percent(pct)} of the reserved peak`;
  return `${formatBytes(f.stake_bytes)} at stake, ${of}`;
}

function percent(p: number): string {
  return p >= 10 ? `${Math.round(p)}%` : p >= 0.1 ? `${p.toFixed(1)}%` : '<0.1%';
}
