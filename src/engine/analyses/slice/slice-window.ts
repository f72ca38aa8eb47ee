import { SnapshotError } from '../../base/errors.js';
import { entryAtTime, entryTimes } from '../../model/entry-times.js';
import type { DeviceModel } from '../../model/snapshot.js';

/** Trace entries [start, end) of one device that a slice keeps. */
export interface SliceWindow {
  device: number;
  start: number;
  end: number;
}

/** What the user asked for: entry indices or times in µs, half-open [from, to); `to` may be Infinity. */
export type SliceRequest = { by: 'entries' | 'time'; from: number; to: number };

/**
 * Each device is cut by its own entry indices (`entries`) or by the shared clock (`time`): entry
 * indices of different devices do not line up, times do. An entry range past a device's end
 * shrinks to what that device has; a range no device reaches is an error, not an empty file.
 */
export function sliceWindows(devices: DeviceModel[], req: SliceRequest): SliceWindow[] {
  if (!(req.from <= req.to)) throw new SnapshotError(`empty range ${req.from}:${req.to} (need A <= B)`);
  const traced = devices.filter((d) => d.trace.length > 0);
  if (traced.length === 0)
    throw new SnapshotError('has no trace entries to slice (was history recording on?)');
  return req.by === 'entries' ? byEntries(devices, req) : byTime(devices, req);
}

function byEntries(devices: DeviceModel[], req: SliceRequest): SliceWindow[] {
  const longest = Math.max(...devices.map((d) => d.trace.length));
  if (req.from >= longest || (req.to > longest && Number.isFinite(req.to))) {
    throw new SnapshotError(
      `range ${req.from}:${req.to} is out of bounds: the longest trace has ${longest} entries (0:${longest})`,
    );
  }
  return devices.map((d) => {
    const n = d.trace.length;
    return { device: d.device, start: Math.min(req.from, n), end: Math.min(req.to, n) };
  });
}

function byTime(devices: DeviceModel[], req: SliceRequest): SliceWindow[] {
  const windows = devices.map((d) => {
    const t = d.trace.timeUs;
    if (d.trace.length > 0 && Number.isNaN(t[0]!)) {
      throw new SnapshotError(
        `device ${d.device}: trace entries have no time_us (PyTorch < 2.2); use --range with entry indices`,
      );
    }
    const times = entryTimes(d);
    return { device: d.device, start: entryAtTime(times, req.from), end: entryAtTime(times, req.to) };
  });
  if (windows.every((w) => w.start === w.end)) {
    throw new SnapshotError(`no trace entry has time_us in ${req.from}:${req.to}${timeSpan(devices)}`);
  }
  return windows;
}

function timeSpan(devices: DeviceModel[]): string {
  const times = devices.filter((d) => d.trace.length > 0).map((d) => d.trace.timeUs);
  const first = Math.min(...times.map((t) => t[0]!));
  const last = Math.max(...times.map((t) => t[t.length - 1]!));
  return ` (the trace spans ${first}:${last + 1})`;
}
