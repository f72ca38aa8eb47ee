/**
 * Snapshots as torch_npu (Ascend NPU) writes them, for tests of what memlens makes of that
 * producer. Each rule below comes from torch_npu's source (repository Ascend/pytorch, master of
 * August 2026, and the v5.0.0 tags), cited where it is applied; docs/producers.md sums them up.
 *
 * The caching allocator is the generator's own model (allocator.ts) with torch_npu's one size
 * difference, the 32-byte pad (`pad: 32`); the workload is a short scripted one, so every figure
 * a test checks can be worked out by hand.
 */
import { concatChunks, PickleWriter, type PyValue, pyTuple, Shared } from '../../src/engine/encode/index.js';
import { Allocator } from './allocator.js';
import { ALLOCATED, type Block, FREE } from './blocks.js';
import { ACTION_NAMES, Clock, OOM, type SimEvent } from './events.js';
import { type FrameSpec, type Stack, StackTable } from './frames.js';
import { segmentHead } from './shape.js';
import { type SegmentView, segmentViews } from './views.js';

export type NpuVersion = '7.2' | '7.1' | '6.0' | '5.0';

/**
 * How the dump ends. 'allocator': the caching allocator raised the OOM (an `oom` entry);
 * 'state-only': `OOM_SNAPSHOT_ENABLE=2`, the caching allocator's trace holds only that `oom` entry; 'cann': the OOM
 * came from inside CANN, so the dump has no `oom` entry at all.
 */
export type NpuOom = 'none' | 'allocator' | 'state-only' | 'cann';

export interface NpuOptions {
  /** 7.2: newest (segment_pool_id, pool_id); 7.1: workspace entries, no pool ids; 6.0: neither;
   *  5.0: `memory_snapshot()`'s bare segment list, blocks with only size and state. */
  version?: NpuVersion;
  device?: number;
  expandable?: boolean;
  oom?: NpuOom;
  /** Bytes the workspace allocator was asked for (0: no workspace block). */
  workspaceRequest?: number;
  /** `max_entries` of `_record_memory_history`: the ring buffer keeps only the last this many. */
  maxEntries?: number;
  /** `AddPadSize()`: 32, or 0 on Ascend950 with CANN >= 9.1. */
  pad?: number;
  /** false: `_record_memory_history(enabled="state")`, no trace kept; the workspace markers still are. */
  traced?: boolean;
}

export interface NpuSnapshot {
  readonly value: PyValue;
  /** The `aclrtStream` every entry and segment carries. */
  readonly stream: number;
  /** Workspace segment address and size (0 when there is none). */
  readonly workspace: { addr: number; size: number };
  /** Segment events of the caching allocator the trace holds, in order, as [action, addr, size]. */
  readonly segmentEvents: [string, number, number][];
  /** Largest inactive block of the caching allocator at the dump, and the bytes reserved. */
  readonly largestFree: number;
  readonly reserved: number;
}

const MiB = 2 ** 20;
/** torch_npu `AddPadSize()` (NPUCachingAllocator.cpp): 32 bytes unless Ascend950 with CANN >= 9.1. */
export const NPU_PAD = 32;
/** `kRoundLarge` (NPUCachingAllocator.cpp): the workspace allocator rounds its blocks to 2 MiB. */
const ROUND_LARGE = 2 * MiB;
/** An `aclrtStream` as `int64_t(stream)` writes it (Module.cpp, THNPModule_memorySnapshot). */
const NPU_STREAM = 0xaaab_1c2d_3e40;
const DEVICE_MEMORY = 512 * MiB;
const VA_BASE = 0x1240_0000_0000;
// Above the generator's classic (2^39 bytes) and expandable ranges from VA_BASE.
const WORKSPACE_BASE = 0x1500_0000_0000;

/** Native frames as torch_npu's unwinder symbolizes them: the library's basename, line 0. */
const ALLOCATOR_FRAMES: readonly FrameSpec[] = [
  [
    'c10_npu::NPUCachingAllocator::NpuCachingAllocator::malloc(void**, int, unsigned long, aclrtStream*)',
    'libtorch_npu.so',
    0,
  ],
  ['??', 'libtorch_npu.so', 0],
  [
    'at_npu::native::OpPreparation::apply_tensor_without_format(long, c10::TensorOptions const&)',
    'libtorch_npu.so',
    0,
  ],
  ['at_npu::native::NPUNativeFunctions::empty(c10::ArrayRef<long>)', 'libtorch_npu.so', 0],
];

export function npuSnapshot(options: NpuOptions = {}): NpuSnapshot {
  const version = options.version ?? '7.2';
  const device = options.device ?? 0;
  const oom = options.oom ?? 'none';
  const stacks = new StackTable();
  const site = (name: string, file: string, line: number): Stack =>
    stacks.stack(`${file}:${line}`, () => [
      ...ALLOCATOR_FRAMES,
      [name, file, line],
      ['train_step', 'train.py', 40],
    ]);
  const wsRequest = version === '6.0' || version === '5.0' ? 0 : (options.workspaceRequest ?? 5 * MiB);
  const workspace = {
    addr: wsRequest > 0 ? WORKSPACE_BASE : 0,
    // NPUWorkspaceAllocator::malloc: size + 32, rounded up to kRoundLarge.
    size: wsRequest > 0 ? Math.ceil((wsRequest + 32) / ROUND_LARGE) * ROUND_LARGE : 0,
  };
  const a = new Allocator(
    {
      totalMemory: DEVICE_MEMORY,
      // The workspace block is device memory the caching allocator does not own: aclrtGetMemInfo's
      // free figure (an oom's device_free) leaves it out.
      outsideMemory: workspace.size,
      vaBase: VA_BASE,
      expandable: options.expandable ?? false,
      poolCount: 1,
      pad: options.pad ?? NPU_PAD,
    },
    new Clock(0),
  );
  const events = runWorkload(a, site, oom);
  const views = segmentViews(a, device);
  const shape = new NpuShape(version, device);
  const segments = views.map((v) => shape.segment(v));
  if (workspace.size > 0) segments.push(shape.workspaceSegment(workspace.addr, workspace.size, wsRequest));
  // memory_snapshot.cpp (_record_memory_history): "state" keeps a ring buffer of one entry, the
  // oom, while the workspace allocator's recording is on all the same.
  const kept =
    options.traced === false
      ? []
      : oom === 'state-only'
        ? events.filter((e) => e.action === OOM)
        : events.slice(-(options.maxEntries ?? 0));
  const trace = [
    ...(workspace.size > 0 ? shape.workspaceEntries(workspace.addr, workspace.size) : []),
    ...kept.map((e) => shape.entry(e)),
  ];
  const segmentEvents = kept
    .filter((e) => e.action >= 3 && e.action <= 6)
    .map((e): [string, number, number] => [ACTION_NAMES[e.action]!, e.addr, e.size]);
  const facts = {
    stream: NPU_STREAM,
    workspace,
    segmentEvents,
    largestFree: Math.max(0, ...views.flatMap((v) => v.blocks.filter((b) => b.isFree).map((b) => b.size))),
    reserved: a.reserved + workspace.size,
  };
  if (version === '5.0') return { value: segments, ...facts };
  // Module.cpp: the dict holds `segments` and `device_traces` and nothing else, on every branch.
  const traces: PyValue[] = Array.from({ length: device + 1 }, (_, d) => (d === device ? trace : []));
  return { value: { segments, device_traces: traces }, ...facts };
}

/** The snapshot as `pickle.dump` writes it (torch_npu/npu/memory.py `_dump_snapshot`: protocol 4). */
export function npuSnapshotBytes(options: NpuOptions = {}): { bytes: Uint8Array; facts: NpuSnapshot } {
  const facts = npuSnapshot(options);
  const chunks: Uint8Array[] = [];
  new PickleWriter((c) => chunks.push(c), { protocol: 4 }).dump(facts.value);
  return { bytes: concatChunks(chunks), facts };
}

/**
 * Parameters (1 MiB tensors: the pad puts them in the large pool), small biases, three steps of
 * a 40 MiB activation (a 42 MiB segment: 40 MiB + 32 B rounds past 40 MiB) and a temporary, an
 * empty_cache between steps, and a 30 MiB buffer freed at the end so the cache holds a large free
 * block on the one stream.
 */
function runWorkload(
  a: Allocator,
  site: (n: string, f: string, l: number) => Stack,
  oom: NpuOom,
): SimEvent[] {
  const s = NPU_STREAM;
  const weight = site('init_weights', 'model.py', 12);
  const bias = site('init_bias', 'model.py', 13);
  const act = site('forward', 'model.py', 30);
  const tmp = site('attention', 'model.py', 31);
  // Parameters and biases stay allocated to the dump.
  for (let i = 0; i < 8; i++) a.malloc(MiB, s, 0, weight);
  for (let i = 0; i < 16; i++) a.malloc(4096, s, 0, bias);
  for (let step = 0; step < 3; step++) {
    const x = a.malloc(40 * MiB, s, 0, act);
    const t = a.malloc(6 * MiB, s, 0, tmp);
    a.free(t, tmp);
    a.free(x, act);
    if (step === 1) a.emptyCache(act);
  }
  const buffer = a.malloc(30 * MiB, s, 0, site('make_buffer', 'model.py', 50));
  a.free(buffer, act);
  if (oom === 'allocator' || oom === 'state-only')
    a.failAllocation(64 * MiB, s, site('forward', 'model.py', 33));
  return a.queue;
}

/** The dicts THNPModule_memorySnapshot builds (torch_npu/csrc/npu/Module.cpp), key order included. */
class NpuShape {
  private readonly emptyFrames = new Shared([]);
  private readonly actions = ACTION_NAMES.map((n) => new Shared(n));
  private readonly workspaceAction = new Shared('workspace_snapshot');
  private readonly defaultPool = pyTuple([0, 0]);
  private readonly lists = new Map<number, Shared>();

  constructor(
    private readonly version: NpuVersion,
    private readonly device: number,
  ) {}

  segment(v: SegmentView): PyValue {
    const { head, requested } = segmentHead(v, this.device);
    const type = v.pool.small ? 'small' : 'large';
    // v5.0.0 Module.cpp: device, address, sizes, segment_type, blocks of {size, state}.
    if (this.version === '5.0')
      return {
        ...head,
        segment_type: type,
        blocks: v.blocks.map((b) => ({ size: b.size, state: stateOf(b) })),
      };
    return {
      ...head,
      requested_size: requested,
      stream: v.stream,
      ...(this.version === '7.2' ? { segment_pool_id: this.defaultPool } : {}),
      segment_type: type,
      is_expandable: v.expandable,
      frames: v.stack === null ? this.emptyFrames : this.frames(v.capture, v.stack),
      blocks: v.blocks.map((b) => ({
        address: b.addr,
        size: b.size,
        requested_size: b.requested,
        state: stateOf(b),
        frames: b.state !== FREE && b.stack !== null ? this.frames(b.capture, b.stack) : this.emptyFrames,
      })),
    };
  }

  /**
   * NPUWorkspaceAllocator::get_segm: one large segment per stream, one block whose `allocated`
   * flag is never set, so it is always 'inactive' and counts in no allocated or requested figure.
   */
  workspaceSegment(addr: number, size: number, request: number): PyValue {
    return {
      device: this.device,
      address: addr,
      total_size: size,
      allocated_size: 0,
      active_size: 0,
      requested_size: 0,
      stream: NPU_STREAM,
      ...(this.version === '7.2' ? { segment_pool_id: this.defaultPool } : {}),
      segment_type: 'large',
      is_expandable: false,
      frames: this.emptyFrames,
      blocks: [{ address: addr, size, requested_size: request, state: 'inactive', frames: this.emptyFrames }],
    };
  }

  /** NPUWorkspaceAllocator::get_trace, prepended at dump time: three entries, no frames. */
  workspaceEntries(addr: number, size: number): PyValue[] {
    const entry = (action: Shared) => ({ action, addr, size, stream: NPU_STREAM, ...this.poolId() });
    return [entry(this.workspaceAction), entry(this.actions[3]!), entry(this.actions[0]!)];
  }

  /** Module.cpp: action, addr (device_free on oom), size, stream, pool_id; frames only with a context. */
  entry(e: SimEvent): PyValue {
    const out: Record<string, PyValue> = { action: this.actions[e.action]! };
    out[e.action === OOM ? 'device_free' : 'addr'] = e.addr;
    Object.assign(out, { size: e.size, stream: e.stream }, this.poolId());
    if (e.stack !== null) out.frames = this.frames(e.capture, e.stack);
    return out;
  }

  private poolId(): Record<string, PyValue> {
    return this.version === '7.2' ? { pool_id: this.defaultPool } : {};
  }

  /** One frames list per captured traceback, as the unwinder gathers them. */
  private frames(capture: number, stack: Stack): Shared {
    let list = this.lists.get(capture);
    if (list === undefined) {
      list = new Shared(stack.frames as PyValue[]);
      this.lists.set(capture, list);
    }
    return list;
  }
}

function stateOf(b: Block): string {
  return b.state === ALLOCATED ? 'active_allocated' : b.state === FREE ? 'inactive' : 'active_pending_free';
}
