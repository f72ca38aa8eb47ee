import { SnapshotError } from '../base/errors.js';
import { describeValue, isDict, type PyDict } from '../values/py-values.js';
import { StackRef } from '../values/stack-ref.js';
import { NO_STACK } from './stack-table.js';

export enum BlockState {
  allocated = 0,
  pendingFree = 1,
  inactive = 2,
  unknown = 3,
  /** torch_npu's workspace block: written 'inactive', yet held by the workspace allocator (workspace.ts). */
  workspace = 4,
}

export interface Segment {
  device: number;
  address: number;
  totalSize: number;
  stream: number;
  /** 'large' | 'small', or whatever the file says. */
  pool: string;
  /** `segment_pool_id`: [0, 0] is the default pool, anything else a private pool (graphs, MemPool). */
  poolId: readonly [number, number];
  expandable: boolean;
  stack: number;
  firstBlock: number;
  blockCount: number;
}

/** Blocks of every segment at dump time, as columns, address-ordered within each segment. */
export interface BlockColumns {
  length: number;
  address: Float64Array;
  size: Float64Array;
  requestedSize: Float64Array;
  state: Uint8Array;
  segment: Int32Array;
  stack: Int32Array;
}

export interface SegmentTables {
  segments: Segment[];
  blocks: BlockColumns;
  /** Keys the file's segment and block dicts carry, in first-seen order (PyTorch version era). */
  segmentKeys: string[];
  blockKeys: string[];
  /** Block `state` strings other than PyTorch's three, first-seen order (counted in reserved only). */
  unknownStates: string[];
}

const STATE_CODES: Record<string, BlockState> = Object.assign(Object.create(null), {
  active_allocated: BlockState.allocated,
  active_pending_free: BlockState.pendingFree,
  // memory.py's docstring spells it this way; PyTorch's C++ writes active_pending_free.
  active_awaiting_free: BlockState.pendingFree,
  inactive: BlockState.inactive,
});

/** Reads `segments` (every device mixed) into per-segment records and block columns. */
export function readSegments(list: unknown): SegmentTables {
  if (!Array.isArray(list)) throw new SnapshotError(`'segments' is ${describeValue(list)}, expected a list`);
  const blockCount = list.reduce<number>(
    (n, s) => n + (isDict(s) && Array.isArray(s.blocks) ? s.blocks.length : 0),
    0,
  );
  const blocks = newBlocks(blockCount);
  const segments = list.map((raw, i) => readSegment(raw, i, blocks));
  const segmentKeys = keysSeen(list);
  const blockDicts = list.flatMap((s) => (isDict(s) && Array.isArray(s.blocks) ? s.blocks : []));
  const blockKeys = keysSeen(blockDicts);
  const unknownStates = [...new Set(blockDicts.map(stateName).filter((v) => !(v in STATE_CODES)))];
  return { segments, blocks, segmentKeys, blockKeys, unknownStates };
}

function keysSeen(dicts: unknown[]): string[] {
  const keys = new Set<string>();
  for (const d of dicts) if (isDict(d)) for (const k of Object.keys(d)) keys.add(k);
  return [...keys];
}

/** Empty block columns with room for `n` blocks. */
export function newBlocks(n: number): BlockColumns {
  return {
    length: 0,
    address: new Float64Array(n),
    size: new Float64Array(n),
    requestedSize: new Float64Array(n),
    state: new Uint8Array(n),
    segment: new Int32Array(n),
    stack: new Int32Array(n),
  };
}

function readSegment(raw: unknown, index: number, blocks: BlockColumns): Segment {
  if (!isDict(raw)) throw new SnapshotError(`segment ${index} is ${describeValue(raw)}, expected a dict`);
  const where = `segment ${index}`;
  const address = int(raw, 'address', where);
  const seg: Segment = {
    device: optInt(raw, 'device', where) ?? 0,
    address,
    totalSize: int(raw, 'total_size', where),
    stream: optInt(raw, 'stream', where) ?? 0,
    pool: typeof raw.segment_type === 'string' ? raw.segment_type : 'unknown',
    poolId: poolIdOf(raw.segment_pool_id, where),
    expandable: raw.is_expandable === true,
    stack: stackIdOf(raw.frames, where),
    firstBlock: blocks.length,
    blockCount: 0,
  };
  const list = raw.blocks ?? [];
  if (!Array.isArray(list))
    throw new SnapshotError(`${where}: 'blocks' is ${describeValue(list)}, expected a list`);
  let cursor = address;
  for (let b = 0; b < list.length; b++)
    cursor = readBlock(list[b], `${where} block ${b}`, cursor, index, blocks);
  seg.blockCount = blocks.length - seg.firstBlock;
  return seg;
}

function readBlock(
  raw: unknown,
  where: string,
  cursor: number,
  segment: number,
  blocks: BlockColumns,
): number {
  if (!isDict(raw)) throw new SnapshotError(`${where} is ${describeValue(raw)}, expected a dict`);
  const size = int(raw, 'size', where);
  const last = legacyHistory(raw, where);
  const i = blocks.length++;
  // Files before PyTorch 2.1 have no block address: it is the segment base plus earlier sizes.
  blocks.address[i] = optInt(raw, 'address', where) ?? cursor;
  blocks.size[i] = size;
  blocks.state[i] = STATE_CODES[stateName(raw)] ?? BlockState.unknown;
  blocks.requestedSize[i] =
    optInt(raw, 'requested_size', where) ?? (last ? optInt(last, 'real_size', where) : undefined) ?? size;
  blocks.segment[i] = segment;
  blocks.stack[i] =
    raw.frames !== undefined ? stackIdOf(raw.frames, where) : last ? stackIdOf(last.frames, where) : NO_STACK;
  return blocks.address[i]! + size;
}

function stateName(block: unknown): string {
  const v = isDict(block) ? block.state : undefined;
  return typeof v === 'string' ? v : v === undefined ? '(none)' : describeValue(v);
}

/** PyTorch 2.0 blocks carry `history` (most recent first) instead of frames/requested_size. */
function legacyHistory(raw: PyDict, where: string): PyDict | undefined {
  const h = raw.history;
  if (h === undefined) return undefined;
  if (!Array.isArray(h))
    throw new SnapshotError(`${where}: 'history' is ${describeValue(h)}, expected a list`);
  return isDict(h[0]) ? h[0] : undefined;
}

export function stackIdOf(frames: unknown, where: string): number {
  if (frames === undefined || frames === null) return NO_STACK;
  if (frames instanceof StackRef) return frames.id;
  if (Array.isArray(frames) && frames.length === 0) return NO_STACK;
  throw new SnapshotError(`${where}: 'frames' is ${describeValue(frames)}, expected a list of frames`);
}

function poolIdOf(v: unknown, where: string): readonly [number, number] {
  if (v === undefined || v === null) return DEFAULT_POOL;
  if (Array.isArray(v) && v.length === 2 && Number.isInteger(v[0]) && Number.isInteger(v[1])) {
    return v[0] === 0 && v[1] === 0 ? DEFAULT_POOL : [v[0] as number, v[1] as number];
  }
  throw new SnapshotError(`${where}: 'segment_pool_id' is ${describeValue(v)}, expected (int, int)`);
}

const DEFAULT_POOL = Object.freeze([0, 0] as const);

export function int(d: PyDict, key: string, where: string): number {
  const v = optInt(d, key, where);
  if (v === undefined) throw new SnapshotError(`${where} has no '${key}'`);
  return v;
}

function optInt(d: PyDict, key: string, where: string): number | undefined {
  const v = d[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  const what = typeof v === 'bigint' ? `the int ${v}, beyond 2^53` : describeValue(v);
  throw new SnapshotError(`${where}: '${key}' is ${what}, expected an exact int`);
}
