import { streamView } from '../../../src/engine/analyses/stream-view.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/snapshot.js';

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
