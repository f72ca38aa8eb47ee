/**
 * The model turned back into the dicts `_snapshot()` returns, in the era of the input: the key
 * sets and key order its segments and blocks had, `history` blocks for PyTorch 2.0 files, and
 * trace entries with exactly the keys their columns say they had. Frames and whole tracebacks
 * are shared objects, as PyTorch shares them, so the pickle stays as compact as the original.
 */

import { SnapshotError } from '../../base/errors.js';
import type { BlockAt, SegmentAt } from '../../derived/state/state-segments.js';
import { type PyDict, type PyValue, pyFloat, pyTuple, Shared } from '../../encode/pickle-values.js';
import type { DeviceTrace } from '../../model/device-trace.js';
import { BlockState } from '../../model/segments.js';
import type { Snapshot } from '../../model/snapshot.js';
import { NO_STACK, type StackTable } from '../../model/stack-table.js';
import { Action, type TraceColumns } from '../../model/trace-columns.js';
import { type PyDict as DecodedDict, isDict, isInert, shortText } from '../../values/py-values.js';
import { StackRef } from '../../values/stack-ref.js';

const STATE_NAMES: Record<number, string> = {
  [BlockState.allocated]: 'active_allocated',
  [BlockState.pendingFree]: 'active_pending_free',
  [BlockState.inactive]: 'inactive',
  // torch_npu writes its workspace block as 'inactive' (model/workspace.ts); a slice keeps that.
  [BlockState.workspace]: 'inactive',
};

/** One shared frames list per stack id and one dict per frame, created on first use. */
export class FrameLists {
  private readonly frames: (Shared | undefined)[] = [];
  private readonly lists = new Map<number, Shared>();
  private readonly empty = new Shared([]);

  constructor(private readonly stacks: StackTable) {}

  of(stack: number): Shared {
    if (stack === NO_STACK) return this.empty;
    let list = this.lists.get(stack);
    if (list === undefined) {
      list = new Shared(Array.from(this.stacks.stack(stack), (f) => this.frame(f)));
      this.lists.set(stack, list);
    }
    return list;
  }

  private frame(id: number): Shared {
    let f = this.frames[id];
    if (f === undefined) {
      const { filename, line, name, extra } = this.stacks.frame(id);
      f = new Shared({ filename, line, name, ...(extra ? (plainValue(extra, 'frame') as PyDict) : {}) });
      this.frames[id] = f;
    }
    return f;
  }
}

const SEGMENT_KEYS = new Set([
  'device',
  'address',
  'total_size',
  'allocated_size',
  'active_size',
  'requested_size',
  'stream',
  'segment_type',
  'segment_pool_id',
  'is_expandable',
  'frames',
  'blocks',
]);
const BLOCK_KEYS = new Set(['address', 'size', 'requested_size', 'state', 'frames', 'history']);

/** Segment and block keys of the input that the model does not keep: the slice cannot write them. */
export function keysNotCarried(s: Snapshot): string[] {
  return [
    ...s.tables.segmentKeys.filter((k) => !SEGMENT_KEYS.has(k)).map((k) => `segment key '${k}'`),
    ...s.tables.blockKeys.filter((k) => !BLOCK_KEYS.has(k)).map((k) => `block key '${k}'`),
  ];
}

export function segmentDict(seg: SegmentAt, s: Snapshot, frames: FrameLists): PyDict {
  const legacy = s.tables.blockKeys.includes('history');
  let allocated = 0;
  let active = 0;
  let requested = 0;
  for (const b of seg.blocks) {
    if (b.state === BlockState.inactive) continue;
    if (b.state === BlockState.allocated) allocated += b.size;
    active += b.size;
    requested += b.requested;
  }
  const fields: Record<string, PyValue> = {
    device: seg.device,
    address: seg.address,
    total_size: seg.size,
    allocated_size: allocated,
    active_size: active,
    requested_size: requested,
    stream: seg.stream,
    segment_type: seg.pool,
    segment_pool_id: pyTuple([...seg.poolId]),
    is_expandable: seg.expandable,
    frames: frames.of(seg.stack),
    blocks: seg.blocks.map((b) => (legacy ? legacyBlockDict(b, frames) : blockDict(b, frames))),
  };
  return pick(fields, s.tables.segmentKeys, ['device', 'address', 'total_size', 'blocks']);
}

function blockDict(b: BlockAt, frames: FrameLists): PyDict {
  return {
    address: b.address,
    size: b.size,
    requested_size: b.requested,
    state: STATE_NAMES[b.state]!,
    frames: frames.of(b.stack),
  };
}

/** PyTorch 2.0: no block address; the allocation's stack and real size live in `history`. */
function legacyBlockDict(b: BlockAt, frames: FrameLists): PyDict {
  // A free block keeps the history of its last allocation when the dump had it.
  const fields = { size: b.size, requested_size: b.requested, state: STATE_NAMES[b.state]! };
  // A never-used free remainder has no `history` key at all in PyTorch 2.0 files.
  if (b.state === BlockState.inactive && b.stack === NO_STACK) return fields;
  return { ...fields, history: [{ addr: b.address, real_size: b.requested, frames: frames.of(b.stack) }] };
}

/** The fields the input's dicts had, in its order; fields it lacked are left out unless required. */
function pick(fields: Record<string, PyValue>, keys: string[], required: string[]): PyDict {
  const out: Record<string, PyValue> = {};
  const order = keys.length > 0 ? keys : Object.keys(fields);
  for (const k of order) if (k in fields) out[k] = fields[k]!;
  for (const k of required) if (!(k in out)) out[k] = fields[k]!;
  return out;
}

/** Trace entries [start, end) of one device, produced one at a time for the streaming writer. */
export function* traceEntries(
  t: DeviceTrace,
  cols: TraceColumns,
  start: number,
  end: number,
  frames: FrameLists,
): Generator<PyValue, void> {
  // Recorded with a context, every entry has `frames` (empty when nothing was captured); without
  // one (PyTorch 2.0, context=None), none has. The columns cannot tell an empty list from none.
  const withFrames = t.stack.some((id) => id !== NO_STACK);
  for (let i = start; i < end; i++) yield traceEntry(t, cols, i, withFrames ? frames : null);
}

function traceEntry(t: DeviceTrace, cols: TraceColumns, i: number, frames: FrameLists | null): PyDict {
  // As the file wrote it: the model reads torch_npu's workspace entries as one marker (workspace.ts).
  const action = cols.writtenAs.get(t.rowOf(i)) ?? t.action[i]!;
  const e: Record<string, PyValue> = { action: cols.actionNames[action]! };
  if (t.action[i] === Action.oom && t.deviceFree && !Number.isNaN(t.deviceFree[i]!))
    e.device_free = t.deviceFree[i]!;
  else if (!Number.isNaN(t.addr[i]!)) e.addr = t.addr[i]!;
  if (!Number.isNaN(t.size[i]!)) e.size = t.size[i]!;
  e.stream = cols.streams[t.stream[i]!]!;
  if (!Number.isNaN(t.timeUs[i]!)) e.time_us = t.timeUs[i]!;
  const cc = t.compileContext?.[i] ?? -1;
  if (cc >= 0) e.compile_context = cols.texts[cc]!;
  const um = t.userMetadata?.[i] ?? -1;
  if (um >= 0) e.user_metadata = cols.texts[um]!;
  const pool = t.poolId?.[i] ?? -1;
  if (pool >= 0) e.pool_id = pyTuple([...cols.pools[pool]!]);
  const extra = cols.extras.get(t.rowOf(i));
  if (extra) for (const [k, v] of Object.entries(extra)) e[k] = plainValue(v, `trace entry key '${k}'`);
  if (frames !== null) e.frames = frames.of(t.stack[i]!);
  return e;
}

/** Values PyTorch writes as floats even when integral; JS numbers cannot tell 0.0 from 0. */
const FLOAT_KEYS = new Set(['garbage_collection_threshold']);

/**
 * A decoded value written back: tuples (frozen arrays) stay tuples, frames references become
 * frames lists. Values that stood for pickled Python objects cannot be carried.
 */
export function plainValue(v: unknown, where: string, frames?: FrameLists): PyValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint')
    return v;
  if (v instanceof Uint8Array) return v;
  if (v instanceof StackRef) {
    if (frames) return frames.of(v.id);
    throw new SnapshotError(`${where}: frames outside segments and traces cannot be carried`);
  }
  if (Array.isArray(v)) {
    const items = v.map((x) => plainValue(x, where, frames));
    return Object.isFrozen(v) ? pyTuple(items) : items;
  }
  if (isDict(v)) return plainDict(v, where, frames);
  const what = isInert(v) ? v.toString() : shortText(v);
  throw new SnapshotError(`${where} holds ${what}, which a slice cannot carry`);
}

function plainDict(d: DecodedDict, where: string, frames?: FrameLists): PyDict {
  const out: Record<string, PyValue> = {};
  for (const [k, x] of Object.entries(d)) {
    out[k] = FLOAT_KEYS.has(k) && typeof x === 'number' ? pyFloat(x) : plainValue(x, where, frames);
  }
  return out;
}
