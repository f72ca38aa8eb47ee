/**
 * Each tensor of a recorded cycle in the snapshot of its window: the allocation whose bytes hold
 * its data_ptr and that was live at the collection's time, and the GC burst that freed it. The
 * observer inspects the garbage at the collection's end, before it is released, so the tensor is
 * live at time_us and its free follows. What cannot be linked is said plainly, with the reason.
 */
import { formatDuration } from '../../base/format.js';
import { allocationDetails, type DetailFrame } from '../../derived/allocation/allocation-details.js';
import { allocationsAtAddress } from '../../derived/allocation/allocation-search.js';
import { entryAtTime, entryTimes } from '../../model/entry-times.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { DeviceGc } from '../gc/gc-bursts.js';
import type { CycleTensor } from './cycle-file.js';

export interface AllocationLink {
  device: number;
  /** The allocation's id in the device's allocation table (what the web app selects). */
  id: number;
  address: number;
  size: number;
  /** Trace entries; alloc -1 = before the recorded window, free null = alive at dump. */
  alloc_entry: number;
  free_entry: number | null;
  alloc_time_us: number | null;
  free_time_us: number | null;
  /** The frame that names the allocation (the project's frame filter), null without a stack. */
  site: DetailFrame | null;
}

export interface BurstLink {
  /** Index into the device's GcBurst list. */
  index: number;
  /** The burst's first and last free entries. */
  entry: number;
  last_entry: number;
  time_us: number | null;
  count: number;
  bytes: number;
  /** The device trace's first time, for "1.25 s into the trace". */
  trace_start_us: number | null;
}

export interface TensorLink {
  /** The tensor's node id. */
  tensor: number;
  allocation: AllocationLink | null;
  /** Why no allocation was found (null when one was). */
  allocation_reason: string | null;
  burst: BurstLink | null;
  burst_reason: string | null;
}

export const NOT_CUDA = (device: string) => `a ${device} tensor: memory snapshots record CUDA memory only`;

/** The device index a tensor's device names ("cuda:1" → 1); null for other devices. */
export function cudaIndex(device: string): number | null {
  const m = /^cuda(?::(\d+))?$/.exec(device);
  return m === null ? null : Number(m[1] ?? 0);
}

/**
 * Links one tensor, seen at `timeUs`, to the snapshot. `gcOf` gives a device's GC bursts (the
 * caller computes them once per device and shares them between tensors).
 */
export function linkTensor(
  s: Snapshot,
  id: number,
  t: CycleTensor,
  timeUs: number,
  gcOf: (d: DeviceModel) => DeviceGc,
): TensorLink {
  const none = (reason: string): TensorLink => ({
    tensor: id,
    allocation: null,
    allocation_reason: reason,
    burst: null,
    burst_reason: reason,
  });
  const index = cudaIndex(t.device);
  if (index === null) return none(NOT_CUDA(t.device));
  const d = s.devices.find((x) => x.device === index);
  if (d === undefined)
    return none(
      `the snapshot has no device ${index} (devices: ${s.devices.map((x) => x.device).join(', ')})`,
    );
  const found = liveAllocation(d, t.data_ptr, timeUs);
  if (typeof found === 'string') return none(found);
  const allocation = describeAllocation(s, d, found);
  const free = freeEntry(d, found);
  const link: TensorLink = {
    tensor: id,
    allocation,
    allocation_reason: null,
    burst: null,
    burst_reason: null,
  };
  if (free === null) {
    link.burst_reason = 'still allocated when the snapshot was taken';
    return link;
  }
  const gc = gcOf(d);
  const burst = gc.bursts.findIndex((b) => b.entry <= free && free <= b.last_entry);
  if (burst < 0) {
    link.burst_reason = `freed at entry ${free} in no GC burst (a burst frees ${gc.min_count}+ long-lived allocations at once)`;
    return link;
  }
  const b = gc.bursts[burst]!;
  link.burst = {
    index: burst,
    entry: b.entry,
    last_entry: b.last_entry,
    time_us: b.time_us,
    count: b.count,
    bytes: b.bytes,
    trace_start_us: gc.trace_start_us,
  };
  return link;
}

/**
 * The allocation holding `address` that was live at `timeUs`: allocated at or before it (or
 * before the recorded window) and freed at or after it (or never). The latest such allocation
 * when several qualify; otherwise why none does.
 */
function liveAllocation(d: DeviceModel, address: number, timeUs: number): number | string {
  const a = d.allocations;
  const times = entryTimes(d);
  const n = d.trace.length;
  const hex = `0x${address.toString(16)}`;
  if (n === 0 || times[n - 1] === Number.NEGATIVE_INFINITY)
    return 'the snapshot’s trace has no times (PyTorch before 2.2): which allocation was live cannot be told';
  const ids = allocationsAtAddress(d, address);
  if (ids.length === 0) return `address ${hex} is in no allocation of the trace or the dump`;
  const allocatedBy = entryAtTime(times, timeUs, true);
  const freedFrom = entryAtTime(times, timeUs);
  let best = -1;
  for (const id of ids)
    if (a.start[id]! < allocatedBy && a.end[id]! >= freedFrom && (best < 0 || a.start[id]! > a.start[best]!))
      best = id;
  if (best >= 0) return best;
  const first = times.find((x) => x !== Number.NEGATIVE_INFINITY)!;
  const last = times[n - 1]!;
  if (timeUs < first || timeUs > last)
    return `the cycle’s time is outside the trace (${timeWords(timeUs, first)} its start; the trace lasts ${formatDuration(last - first)})`;
  return `address ${hex} was allocated in the trace (${ids.length === 1 ? 'once' : `${ids.length} times`}), but not at the cycle’s time`;
}

function timeWords(t: number, first: number): string {
  return t < first ? `${formatDuration(first - t)} before` : `${formatDuration(t - first)} after`;
}

/** The entry where the user freed it (free_requested, else the completed free); null if alive at dump. */
function freeEntry(d: DeviceModel, id: number): number | null {
  const a = d.allocations;
  const requested = a.freeRequested[id]!;
  if (requested >= 0) return requested;
  return a.end[id]! < d.trace.length ? a.end[id]! : null;
}

function describeAllocation(s: Snapshot, d: DeviceModel, id: number): AllocationLink {
  const x = allocationDetails(s, d, id);
  return {
    device: d.device,
    id,
    address: x.address,
    size: x.size,
    alloc_entry: x.alloc_entry,
    free_entry: freeEntry(d, id),
    alloc_time_us: x.alloc_time_us,
    free_time_us: x.free_time_us,
    site: x.frames[0] ?? null,
  };
}
