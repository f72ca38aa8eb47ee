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
