/**
 * How much device memory the simulated allocator may obtain (allocator-spec §9.9): cudaMalloc is
 * modelled as succeeding while reserved + new segment ≤ capacity. The only calibration a trace
 * holds is an `oom` entry: reserved then + what CUDA reported free. A fixed budget cannot follow
 * memory taken outside PyTorch while the program ran: when the recording reserved more before
 * the oom than that sum, the budget is the recorded peak (the allocator did obtain it), so that
 * a replay under the recorded settings does not fail where the recording did not.
 */
import type { DeviceModel } from '../model/snapshot.js';
import { Action } from '../model/trace-columns.js';

/**
 * 'oom': reserved + device_free at the first oom; 'recorded peak': the reserved peak recorded
 * before that oom, which was larger (memory outside PyTorch grew); 'option': given.
 */
export type CapacitySource = 'option' | 'oom' | 'recorded peak' | 'unlimited';

export interface DeviceCapacity {
  bytes: number;
  source: CapacitySource;
  /** reserved + device_free at the first oom (null: no oom with device_free). */
  at_oom_bytes: number | null;
  /** Entry of the recorded peak when it set the capacity, else -1. */
  peak_entry: number;
}

export function deviceCapacity(d: DeviceModel, given: number | undefined): DeviceCapacity {
  const t = d.trace;
  let peak = d.totals.start.reserved;
  let peakEntry = -1;
  for (let i = 0; i < t.length; i++) {
    const free = t.deviceFree?.[i];
    if (t.action[i] === Action.oom && free !== undefined && !Number.isNaN(free)) {
      const atOom = d.totals.reserved[i]! + free;
      if (given !== undefined) return { bytes: given, source: 'option', at_oom_bytes: atOom, peak_entry: -1 };
      return atOom >= peak
        ? { bytes: atOom, source: 'oom', at_oom_bytes: atOom, peak_entry: -1 }
        : { bytes: peak, source: 'recorded peak', at_oom_bytes: atOom, peak_entry: peakEntry };
    }
    if (d.totals.reserved[i]! > peak) {
      peak = d.totals.reserved[i]!;
      peakEntry = i;
    }
  }
  if (given !== undefined) return { bytes: given, source: 'option', at_oom_bytes: null, peak_entry: -1 };
  return { bytes: Number.POSITIVE_INFINITY, source: 'unlimited', at_oom_bytes: null, peak_entry: -1 };
}
