/**
 * How much device memory the simulated allocator may obtain (allocator-spec §9.9): cudaMalloc is
 * modelled as succeeding while reserved + new segment ≤ capacity. The only calibration a trace
 * holds is an `oom` entry: reserved then + what CUDA reported free.
 */
import type { DeviceModel } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';

export type CapacitySource = 'option' | 'oom' | 'unlimited';

export function deviceCapacity(
  d: DeviceModel,
  given: number | undefined,
): { bytes: number; source: CapacitySource } {
  if (given !== undefined) return { bytes: given, source: 'option' };
  const t = d.trace;
  for (let i = 0; i < t.length; i++) {
    const free = t.deviceFree?.[i];
    if (t.action[i] === Action.oom && free !== undefined && !Number.isNaN(free)) {
      return { bytes: d.totals.reserved[i]! + free, source: 'oom' };
    }
  }
  return { bytes: Number.POSITIVE_INFINITY, source: 'unlimited' };
}
