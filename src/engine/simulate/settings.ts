/**
 * Allocator settings the simulator runs under: the `PYTORCH_CUDA_ALLOC_CONF` keys of the native
 * backend (allocator-spec §2, §3, §5) plus the PyTorch version whose rules apply (§8).
 */

import { SnapshotError } from '../base/errors.js';
import { requestPad } from '../model/producer.js';
import type { Snapshot } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';
import type { PyDict } from '../values/py-values.js';
import { DIVISION_INTERVALS, floorLog2, MiB } from './rounding.js';

/** Rules that changed between PyTorch releases (allocator-spec §8). */
export interface VersionRules {
  /** ≤ 2.3: a divisions entry of 1 left block sizes unrounded (PR #126830 fixed it). */
  unroundedDivisionOne: boolean;
  /** ≤ 2.10: `>` in a divisions list also overwrites the last explicit interval. */
  gtOverwritesLast: boolean;
  /** ≤ 2.5: the oversize reuse tolerance is a fixed 20 MiB (no max_non_split_rounding_mb). */
  fixedNonSplitTolerance: boolean;
  /** ≥ 2.11: `large_segment_size_mb` sizes mid-size segments and large expandable pages. */
  largeSegmentKey: boolean;
  /** ≥ 2.5: private pools (CUDA graphs, MemPool) use expandable segments too. */
  expandablePrivatePools: boolean;
  /** ≥ 2.5: GC and release_available_cached_blocks skip blocks of expandable segments. */
  releaseSkipsExpandable: boolean;
  /** ≥ 2.10: GC and the fraction limit need a memory fraction below 1 (before: any call). */
  fractionBelowOne: boolean;
}

export interface SimSettings {
  torchVersion: string;
  version: VersionRules;
  /** Bytes; Infinity when unset (`max_split_size` reads -1 in a snapshot). */
  maxSplitSize: number;
  /** Per size interval (allocator-spec §2.3), 0 = plain 512-byte rounding. */
  divisions: number[];
  gcThreshold: number;
  expandable: boolean;
  nonSplitTolerance: number;
  largeSegmentSize: number;
  /** `set_per_process_memory_fraction` / `per_process_memory_fraction`; undefined: never set. */
  memoryFraction: number | undefined;
  /** Bytes added to each request before rounding: 32 for torch_npu (model/producer.ts), else 0. */
  pad: number;
}

export const DEFAULT_TORCH_VERSION = '2.6';
const LARGE_BUFFER = 20 * MiB;

function versionRules(torchVersion: string): VersionRules {
  const m = /^(\d+)\.(\d+)/.exec(torchVersion);
  if (m === null || m[1] !== '2' || Number(m[2]) < 1) {
    throw new SnapshotError(`--torch-version ${torchVersion}: expected 2.1 or later, like 2.6`);
  }
  const minor = Number(m[2]);
  return {
    unroundedDivisionOne: minor <= 3,
    gtOverwritesLast: minor <= 10,
    fixedNonSplitTolerance: minor <= 5,
    largeSegmentKey: minor >= 11,
    expandablePrivatePools: minor >= 5,
    releaseSkipsExpandable: minor >= 5,
    fractionBelowOne: minor >= 10,
  };
}

export function defaultSettings(torchVersion = DEFAULT_TORCH_VERSION): SimSettings {
  return {
    torchVersion,
    version: versionRules(torchVersion),
    maxSplitSize: Number.POSITIVE_INFINITY,
    divisions: new Array<number>(DIVISION_INTERVALS).fill(0),
    gcThreshold: 0,
    expandable: false,
    nonSplitTolerance: LARGE_BUFFER,
    largeSegmentSize: LARGE_BUFFER,
    memoryFraction: undefined,
    pad: 0,
  };
}

/** Whether GC and the memory-fraction limit are active (allocator-spec §3, `GC_ENABLED`). */
export function fractionActive(s: SimSettings): boolean {
  if (s.memoryFraction === undefined) return false;
  return !s.version.fractionBelowOne || s.memoryFraction < 1;
}

/**
 * The settings a snapshot records (`allocator_settings`, PyTorch ≥ 2.3). The dict's parsed
 * values win; the settings string adds the keys the dict does not carry.
 */
export function recordedSettings(dict: PyDict | undefined, torchVersion: string): SimSettings {
  const s = defaultSettings(torchVersion);
  if (dict === undefined) return s;
  const conf = dict.PYTORCH_CUDA_ALLOC_CONF;
  if (typeof conf === 'string' && conf.trim() !== '') {
    try {
      applyConf(s, conf);
    } catch {
      // The dict below is authoritative; a string this parser rejects adds nothing.
    }
  }
  const split = dict.max_split_size;
  if (typeof split === 'number') s.maxSplitSize = split < 0 ? Number.POSITIVE_INFINITY : split;
  if (typeof dict.garbage_collection_threshold === 'number')
    s.gcThreshold = dict.garbage_collection_threshold;
  if (typeof dict.expandable_segments === 'boolean') s.expandable = dict.expandable_segments;
  const div = dict.roundup_power2_divisions;
  if (div !== null && typeof div === 'object' && !Array.isArray(div)) {
    for (const [key, v] of Object.entries(div as PyDict)) {
      const mb = Number(key);
      if (typeof v === 'number' && Number.isInteger(mb) && mb >= 1) {
        s.divisions[Math.min(DIVISION_INTERVALS - 1, floorLog2(mb))] = v;
      }
    }
  }
  return s;
}

/**
 * The settings the file's allocator ran under: those it records, torch_npu's pad, and expandable
 * segments where the file does not record the setting but its trace maps and unmaps pages
 * (`segment_map` / `segment_unmap` are written only with expandable segments on: allocator-spec §5,
 * and torch_npu's NPUCachingAllocator.cpp, `map_block`/`unmap_block`) or a segment says
 * `is_expandable`: torch_npu never writes the settings, nor PyTorch before 2.3.
 */
export function snapshotSettings(snapshot: Snapshot, torchVersion: string): SimSettings {
  const s = recordedSettings(snapshot.allocatorSettings, torchVersion);
  s.pad = requestPad(snapshot.producer);
  if (typeof snapshot.allocatorSettings?.expandable_segments !== 'boolean' && mapsPages(snapshot))
    s.expandable = true;
  return s;
}

function mapsPages(snapshot: Snapshot): boolean {
  if (snapshot.tables.segments.some((g) => g.expandable)) return true;
  return snapshot.devices.some(
    (d) => d.facts.actionCounts[Action.segment_map]! + d.facts.actionCounts[Action.segment_unmap]! > 0,
  );
}

/** Applies a settings string (`key:value,key:value`, divisions may be a `[k:v,...]` list). */
export function applyConf(s: SimSettings, conf: string): SimSettings {
  for (const [key, value] of confPairs(conf)) applyKey(s, key, value);
  return s;
}

function confPairs(conf: string): [string, string][] {
  const pairs: [string, string][] = [];
  let depth = 0;
  let start = 0;
  const text = conf.trim();
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === '[') depth++;
    else if (c === ']') depth--;
    else if ((c === ',' && depth === 0) || i === text.length) {
      const item = text.slice(start, i).trim();
      start = i + 1;
      if (item === '') continue;
      const colon = item.indexOf(':');
      if (colon < 0) throw new SnapshotError(`setting '${item}': expected key:value`);
      pairs.push([item.slice(0, colon).trim(), item.slice(colon + 1).trim()]);
    }
  }
  return pairs;
}

function applyKey(s: SimSettings, key: string, value: string): void {
  switch (key) {
    case 'max_split_size_mb':
      s.maxSplitSize = number(key, value, minSplitMb(s)) * MiB;
      return;
    case 'roundup_power2_divisions':
      s.divisions = parseDivisions(value, s.version.gtOverwritesLast);
      return;
    case 'garbage_collection_threshold': {
      const t = Number(value);
      if (!(t > 0 && t < 1)) throw new SnapshotError(`${key}:${value}: expected a value in (0, 1)`);
      s.gcThreshold = t;
      return;
    }
    case 'expandable_segments':
      s.expandable = bool(key, value);
      return;
    case 'max_non_split_rounding_mb':
      if (s.version.fixedNonSplitTolerance)
        throw new SnapshotError(`${key} needs PyTorch 2.6 or later (--torch-version)`);
      s.nonSplitTolerance = number(key, value, 0) * MiB;
      return;
    case 'large_segment_size_mb':
      if (!s.version.largeSegmentKey)
        throw new SnapshotError(`${key} needs PyTorch 2.11 or later (--torch-version)`);
      s.largeSegmentSize = number(key, value, 10.000001) * MiB;
      return;
    case 'per_process_memory_fraction': {
      const f = Number(value);
      if (!(f > 0 && f <= 1)) throw new SnapshotError(`${key}:${value}: expected a value in (0, 1]`);
      s.memoryFraction = f;
      return;
    }
    case 'backend':
      if (value !== 'native')
        throw new SnapshotError(`backend:${value} is not simulated (only backend:native)`);
      return;
    case 'release_lock_on_cudamalloc':
    case 'graph_capture_record_stream_reuse':
      return; // no effect on the allocator's state
    default:
      if (key.startsWith('pinned_')) return; // host allocator only
      throw new SnapshotError(`unknown allocator setting '${key}'`);
  }
}

function minSplitMb(s: SimSettings): number {
  // ≤ 2.10: must be > 20 MB; 2.11+: at least large_segment_size_mb.
  return s.version.largeSegmentKey ? s.largeSegmentSize / MiB : 20.000001;
}

function number(key: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) {
    throw new SnapshotError(`${key}:${value}: expected a number of at least ${Math.ceil(min)}`);
  }
  return n;
}

function bool(key: string, value: string): boolean {
  if (value === 'True' || value === 'true') return true;
  if (value === 'False' || value === 'false') return false;
  throw new SnapshotError(`${key}:${value}: expected True or False`);
}

/** `parseRoundUpPower2Divisions` (allocator-spec §2.3). */
export function parseDivisions(value: string, gtOverwritesLast: boolean): number[] {
  const table = new Array<number>(DIVISION_INTERVALS).fill(0);
  if (!value.startsWith('[')) {
    table.fill(powerOfTwo(value, false));
    return table;
  }
  const items = value.replace(/^\[|\]$/g, '').split(',');
  let last = -1;
  for (const item of items) {
    const [k, v] = item.split(':').map((x) => x.trim());
    if (k === undefined || v === undefined)
      throw new SnapshotError(`roundup_power2_divisions: bad item '${item}'`);
    const div = powerOfTwo(v, true);
    if (k === '>') {
      table.fill(div, gtOverwritesLast ? Math.max(last, 0) : last + 1);
      continue;
    }
    const index = Math.min(DIVISION_INTERVALS - 1, floorLog2(powerOfTwo(k, false)));
    if (last < 0) table.fill(div, 0, index);
    table[index] = div;
    last = index;
  }
  return table;
}

function powerOfTwo(v: string, zeroOk: boolean): number {
  const n = Number(v);
  if (Number.isInteger(n) && ((zeroOk && n === 0) || (n > 0 && (n & (n - 1)) === 0))) return n;
  throw new SnapshotError(`roundup_power2_divisions: ${v} is not a power of two`);
}

/** The settings as a PYTORCH_CUDA_ALLOC_CONF string, non-default keys only. */
export function describeSettings(s: SimSettings): string {
  const parts: string[] = [];
  if (s.expandable) parts.push('expandable_segments:True');
  if (Number.isFinite(s.maxSplitSize)) parts.push(`max_split_size_mb:${s.maxSplitSize / MiB}`);
  if (s.divisions.some((v) => v !== 0)) parts.push(`roundup_power2_divisions:${divisionsText(s.divisions)}`);
  if (s.gcThreshold > 0) parts.push(`garbage_collection_threshold:${s.gcThreshold}`);
  if (s.nonSplitTolerance !== LARGE_BUFFER)
    parts.push(`max_non_split_rounding_mb:${s.nonSplitTolerance / MiB}`);
  if (s.largeSegmentSize !== LARGE_BUFFER) parts.push(`large_segment_size_mb:${s.largeSegmentSize / MiB}`);
  if (s.memoryFraction !== undefined) parts.push(`per_process_memory_fraction:${s.memoryFraction}`);
  return parts.join(',');
}

function divisionsText(d: number[]): string {
  if (d.every((v) => v === d[0])) return String(d[0]);
  return `[${d.map((v, i) => `${2 ** i}:${v}`).join(',')}]`;
}
