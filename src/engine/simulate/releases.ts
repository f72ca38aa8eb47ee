/**
 * Where the recorded trace gave memory back outside any allocation (allocator-spec §6, §9.7):
 * a run of segment_free / segment_unmap that is not followed by the segment_alloc / segment_map
 * or oom of the malloc that caused it was an explicit `torch.cuda.empty_cache()`. Runs that are
 * followed by one came from inside a malloc (OOM retry flush, max_split release, GC).
 */
import type { DeviceTrace } from '../model/device-trace.js';
import { Action } from '../model/trace-columns.js';

export const NO_RELEASE = 0;
export const EMPTY_CACHE = 1;
export const MALLOC_RELEASE = 2;

/** Per trace entry: the kind of release run that starts there (NO_RELEASE elsewhere). */
export function releaseRuns(t: DeviceTrace): Uint8Array {
  const out = new Uint8Array(t.length);
  const isRelease = (i: number): boolean =>
    t.action[i] === Action.segment_free || t.action[i] === Action.segment_unmap;
  for (let i = 0; i < t.length; i++) {
    if (!isRelease(i) || (i > 0 && isRelease(i - 1))) continue;
    let j = i;
    while (j < t.length && isRelease(j)) j++;
    const next = j < t.length ? t.action[j] : -1;
    out[i] =
      next === Action.segment_alloc || next === Action.segment_map || next === Action.oom
        ? MALLOC_RELEASE
        : EMPTY_CACHE;
  }
  return out;
}

/**
 * A release run before a new segment that the recorded allocator had no reason to make: with
 * neither max_split_size nor GC in the recorded settings, the only release inside a malloc is
 * the OOM retry flush, and that needs a cudaMalloc that failed. Where the memory then reserved
 * plus the new segment fits in `capacity`, it could not have failed: the program called
 * empty_cache() just before an allocation that needed new memory. Such runs are replayed under
 * every setting, like any explicit empty_cache (`runs` is changed in place and returned).
 */
export function explicitBeforeMalloc(
  t: DeviceTrace,
  reservedAfter: Float64Array,
  startReserved: number,
  runs: Uint8Array,
  capacity: number,
): Uint8Array {
  if (!Number.isFinite(capacity)) return runs;
  for (let i = 0; i < t.length; i++) {
    if (runs[i] !== MALLOC_RELEASE) continue;
    let j = i;
    while (t.action[j] === Action.segment_free || t.action[j] === Action.segment_unmap) j++;
    if (t.action[j] === Action.oom) continue;
    const before = i > 0 ? reservedAfter[i - 1]! : startReserved;
    if (before + t.size[j]! <= capacity) runs[i] = EMPTY_CACHE;
  }
  return runs;
}
