import { streamView } from '../../../src/engine/analyses/summary/index.js';
import { searchAllocations } from '../../../src/engine/derived/index.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/index.js';

/**
 * The device model the timeline queries read: the whole device, or one stream's view of it
 * (built once per stream, one pass over the trace, then kept with its snapshot).
 */
export function streamViews(
  current: () => Snapshot,
  deviceOf: (device: number) => DeviceModel,
): (device: number, stream: number | null | undefined) => DeviceModel {
  const views = new WeakMap<DeviceModel, Map<number, DeviceModel>>();
  return (device, stream) => {
    const d = deviceOf(device);
    if (stream === null || stream === undefined) return d;
    const byStream = views.get(d) ?? new Map<number, DeviceModel>();
    views.set(d, byStream);
    let view = byStream.get(stream);
    if (view === undefined) {
      view = streamView(current(), d, stream);
      byStream.set(stream, view);
    }
    return view;
  };
}

/** The timeline search's matches as flags per allocation id, kept for the last term of each device. */
export function searchMatches(
  current: () => Snapshot,
  deviceOf: (device: number) => DeviceModel,
): (device: number, term: string) => Uint8Array | undefined {
  const last = new WeakMap<DeviceModel, { term: string; flags: Uint8Array }>();
  return (device, term) => {
    if (term.trim() === '') return undefined;
    const d = deviceOf(device);
    const hit = last.get(d);
    if (hit?.term === term) return hit.flags;
    const flags = new Uint8Array(d.allocations.count);
    for (const id of searchAllocations(current(), d, term)) flags[id] = 1;
    last.set(d, { term, flags });
    return flags;
  };
}
