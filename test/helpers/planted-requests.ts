/**
 * Small snapshots that hold only requests (alloc / free pairs, an explicit empty_cache is not
 * needed): the simulator starts from an empty allocator and every expected figure in the tests
 * is worked out by hand from allocator-spec.md, not by running the simulator.
 */
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import type { Snapshot } from '../../src/engine/model/snapshot.js';

export const MiB = 1024 * 1024;

/** `a NAME BYTES` allocates, `f NAME` frees (request and completion together). */
export type Step = ['a', string, number] | ['f', string];

export function plantedSnapshot(steps: Step[], settings: Record<string, unknown> = {}): Snapshot {
  const addr = new Map<string, number>();
  const size = new Map<string, number>();
  const entries: Record<string, unknown>[] = [];
  let next = 0x10000000;
  let time = 0;
  const entry = (action: string, name: string): void => {
    entries.push({
      action,
      addr: addr.get(name),
      size: size.get(name),
      stream: 0,
      time_us: time++,
      frames: [],
    });
  };
  for (const step of steps) {
    if (step[0] === 'a') {
      // Recorded addresses only pair frees with allocs; the simulator places blocks itself.
      addr.set(step[1], next);
      size.set(step[1], step[2]);
      next += 0x100000000;
      entry('alloc', step[1]);
    } else {
      entry('free_requested', step[1]);
      entry('free_completed', step[1]);
    }
  }
  const json = {
    segments: [],
    device_traces: [entries],
    allocator_settings: {
      PYTORCH_CUDA_ALLOC_CONF: '',
      max_split_size: -1,
      garbage_collection_threshold: 0,
      expandable_segments: false,
      ...settings,
    },
  };
  return loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(json)));
}
