/**
 * What every replay of one device reads and no allocator setting changes: the stream and pool
 * mapping with each allocation's pool, and where the trace's release runs start. A sweep replays
 * a device many times (the web app one run per message), so these are derived once per device.
 */
import type { DeviceModel, Snapshot } from '../model/snapshot.js';
import { reservedRangesAfter } from '../model/state-at.js';
import { Action } from '../model/trace-columns.js';
import { SimContext } from './context.js';
import { releaseRuns } from './releases.js';

export interface DeviceInputs {
  context: SimContext;
  /** Per trace entry: the kind of release run starting there (releases.ts). */
  releases: Uint8Array;
  /** Simulator streams in the free sets' order. */
  streamOrder: readonly number[];
  /** Largest request replayed (alloc, or oom retried), in bytes. */
  largestRequest: number;
  /** Largest range reserved when the window opens, in bytes. */
  largestStartRange: number;
}

// Keyed by the device model: it lives as long as its snapshot, and so do these.
const cache = new WeakMap<DeviceModel, DeviceInputs>();

export function deviceInputs(s: Snapshot, d: DeviceModel): DeviceInputs {
  let inputs = cache.get(d);
  if (inputs === undefined) {
    const context = new SimContext(s, d);
    inputs = {
      context,
      releases: releaseRuns(d.trace),
      streamOrder: context.streamOrder(),
      largestRequest: largestRequest(d),
      largestStartRange: reservedRangesAfter(s, d, -1).reduce((m, r) => Math.max(m, r.size), 0),
    };
    cache.set(d, inputs);
  }
  return inputs;
}

function largestRequest(d: DeviceModel): number {
  const { action, size, length } = d.trace;
  let largest = 0;
  for (let i = 0; i < length; i++) {
    const a = action[i];
    if ((a === Action.alloc || a === Action.oom) && size[i]! > largest) largest = size[i]!;
  }
  return largest;
}
