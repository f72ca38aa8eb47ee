import type { DeviceModel, Snapshot } from '../../../src/engine/model/index.js';
import type { SegmentPieces } from '../../../src/engine/views/pools/index.js';
import {
  groupsOnStream,
  type PoolEnvelopes,
  type PoolGroup,
  type PoolTimelineLod,
  poolEnvelopes,
  poolHitAt,
  poolOffsetOf,
  poolTimelineLod,
} from '../../../src/engine/views/pools/index.js';
import type { TimelineRequest } from '../../../src/engine/views/timeline/index.js';
import { oncePer } from './once-per.js';

/** What lies under a point of the pools timeline: an allocation of a group, or the free rest of its envelope. */
export interface PoolPart {
  group: number;
  pool: readonly [number, number];
  stream: number;
  /** The allocation there; -1 in the free part of the envelope (reserved by this pool and stream, unallocated). */
  alloc: number;
}

/**
 * The pools timeline in the worker: each device's groups are found once (one pass over the
 * trace), then every level of detail steps their totals over the window it shows. With a stream,
 * only that stream's groups are stacked, over that stream's view of the device (its totals pick
 * the columns and name the reserved line), so picks and offsets walk the same stack as drawn.
 */
export function poolTimelines(
  current: () => Snapshot,
  deviceOf: (device: number) => DeviceModel,
  viewOf: (device: number, stream: number | null | undefined) => DeviceModel,
  piecesOf: (device: number) => SegmentPieces,
) {
  const envelopesOfModel = oncePer((d: DeviceModel) => poolEnvelopes(current(), d, piecesOf(d.device)));
  const envelopesOf = (device: number): PoolEnvelopes => envelopesOfModel(deviceOf(device));
  return {
    lod(
      device: number,
      request: TimelineRequest,
      stream: number | null | undefined,
      marked: Uint8Array | undefined,
    ): PoolTimelineLod & { groups: PoolGroup[] } {
      const env = envelopesOf(device);
      const shown = { keep: groupsOnStream(env, stream), marked };
      const lod = poolTimelineLod(viewOf(device, stream), piecesOf(device), env, request, shown);
      return { ...lod, groups: env.groups };
    },
    part(device: number, entry: number, bytes: number, stream?: number | null): PoolPart | null {
      const env = envelopesOf(device);
      const keep = groupsOnStream(env, stream);
      const hit = poolHitAt(viewOf(device, stream), piecesOf(device), env, entry, bytes, keep);
      return hit === null ? null : { ...env.groups[hit.group]!, ...hit };
    },
    /** Bytes below the allocation in the pools stack drawn after the entry (-1: not drawn then). */
    offset(device: number, entry: number, alloc: number, stream?: number | null): number {
      const env = envelopesOf(device);
      const keep = groupsOnStream(env, stream);
      return poolOffsetOf(viewOf(device, stream), piecesOf(device), env, entry, alloc, keep);
    },
  };
}

const tops = new WeakMap<DeviceModel, Map<string, number>>();

/**
 * The top of the whole trace for a timeline: the highest reserved (or, stacking allocations,
 * active) bytes after any entry, found once per device (or stream view) and what it stacks.
 */
export function traceTop(d: DeviceModel, reservedOnly: boolean): number {
  const key = reservedOnly ? 'reserved' : 'both';
  const known = tops.get(d) ?? new Map<string, number>();
  tops.set(d, known);
  let top = known.get(key);
  if (top === undefined) {
    const t = d.totals;
    top = Math.max(t.start.reserved, reservedOnly ? 0 : t.start.active);
    for (let k = 0; k < t.reserved.length; k++) top = Math.max(top, t.reserved[k]!);
    if (!reservedOnly) for (let k = 0; k < t.active.length; k++) top = Math.max(top, t.active[k]!);
    known.set(key, top);
  }
  return top;
}
