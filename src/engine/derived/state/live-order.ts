import type { DeviceModel } from '../../model/snapshot.js';

/**
 * The stacking order of the active-memory timeline, as pytorch.org/memory_viz draws it: live
 * allocations bottom-up in the order they were allocated (those from before the recorded window
 * first), so an allocation sits on everything older than it and the stack top is active memory.
 */
export function byStackOrder(d: DeviceModel, ids: Int32Array): Int32Array {
  const start = d.allocations.start;
  return ids.slice().sort((x, y) => start[x]! - start[y]! || x - y);
}

/** Live allocations (alloc → free_completed) after entry `k`, bottom of the stack first. */
export function stackAfter(d: DeviceModel, k: number): Int32Array {
  return byStackOrder(d, d.live.aliveAfter(k));
}

/**
 * The allocation drawn at `bytes` above the baseline after entry `k` (-1 above the stack top):
 * the exact answer behind a click, whatever the timeline's level of detail merged on screen.
 */
export function allocationAt(d: DeviceModel, k: number, bytes: number): number {
  if (bytes < 0) return -1;
  const size = d.allocations.size;
  let y = 0;
  for (const id of stackAfter(d, k)) {
    y += size[id]!;
    if (bytes < y) return id;
  }
  return -1;
}

/** Bytes below allocation `id` in the stack after entry `k` (-1 when it is not live then). */
export function offsetOf(d: DeviceModel, k: number, id: number): number {
  const size = d.allocations.size;
  let y = 0;
  for (const other of stackAfter(d, k)) {
    if (other === id) return y;
    y += size[other]!;
  }
  return -1;
}
