/**
 * Who wrote the file: PyTorch's CUDA (or ROCm) caching allocator, or torch_npu's (Ascend NPU).
 * Both write the same format, so the answer comes from what only one of them writes, and every
 * signal found is kept so reports can say what decided (docs/producers.md).
 *
 * - `workspace_snapshot` entries: only torch_npu's workspace allocator writes them (Ascend/pytorch,
 *   torch_npu/csrc/npu/Module.cpp, THNPModule_memorySnapshot; NPUWorkspaceAllocator.cpp, get_trace).
 * - torch_npu frames: its unwinder names native frames by library basename (`libtorch_npu.so`), and
 *   its C++ namespaces are `c10_npu::` and `at_npu::` (NPUCachingAllocator.cpp).
 * - a small-pool block padded by 32 bytes (request-pad.ts): PyTorch's CUDA allocator pads nothing.
 * - streams: torch_npu writes `int64_t(aclrtStream)`, a pointer, and never stream 0 (Module.cpp);
 *   CUDA's default stream is 0. A side stream alone proves nothing (CUDA code can run on one), so
 *   pointer streams decide only where the file also lacks what every recent PyTorch writes
 *   (`allocator_settings` since 2.3, `time_us` since 2.2) and torch_npu never does.
 */
import type { PyDict } from '../values/py-values.js';
import { npuRequestPad, paddedSmallBlock, type RequestPad } from './request-pad.js';
import type { SegmentTables } from './segments.js';
import type { StackTable } from './stack-table.js';
import { Action, type TraceColumns } from './trace-columns.js';

export type ProducerKind = 'pytorch' | 'torch_npu';

export interface Producer {
  kind: ProducerKind;
  /** What in the file decided, in words ("3 workspace_snapshot entries"); empty: nothing did. */
  signals: string[];
  /** torch_npu only: the bytes its allocator adds to each request, and what told (request-pad.ts). */
  pad?: RequestPad;
}

export interface ProducerEvidence {
  top: PyDict;
  cols: TraceColumns;
  stacks: StackTable;
  tables: SegmentTables;
}

/** Below this a stream value is an index (CUDA's 0, ROCm's small ids), not a device pointer. */
const POINTER_FLOOR = 2 ** 16;
const NPU_FRAME = /(^|\/)(torch_npu\/|libtorch_npu\.so$)|^(c10_npu|at_npu)::/;
/**
 * Frames only a CUDA build records: PyTorch's CUDA allocator and runtime (C++ context) or its
 * torch.cuda Python package. A CUDA file from before 2.2 that runs on side streams has pointer
 * streams and neither time_us nor allocator_settings; such a frame keeps it a PyTorch file.
 */
const CUDA_FRAME =
  /\bc10::cuda::|CUDACachingAllocator|(^|[\\/])(libc10_cuda\.so|libcudart[^/]*)$|[\\/]torch[\\/]cuda[\\/]/;

/**
 * How every command and view names a device: PyTorch's own device string, `cuda:N`, and torch_npu's,
 * `npu:N`. The one place a device's name is made, so the CLI, JSON `label` fields and the web app agree.
 */
export function deviceName(p: Producer, n: number): string {
  return `${p.kind === 'torch_npu' ? 'npu' : 'cuda'}:${n}`;
}

export function detectProducer(e: ProducerEvidence): Producer {
  const decisive: string[] = [];
  const workspace = workspaceEntries(e.cols);
  if (workspace > 0)
    decisive.push(`${workspace} workspace_snapshot trace entr${workspace === 1 ? 'y' : 'ies'}`);
  const frame = npuFrame(e.stacks);
  if (frame !== null) decisive.push(`torch_npu frames (${frame})`);
  const padded = paddedSmallBlock(e.tables);
  if (padded !== null) decisive.push(padded);
  const streams = streamsIn(e.cols, e.tables);
  const pointers = streams.length > 0 && streams.every((v) => v >= POINTER_FLOOR);
  const pointerSignal = `stream values are pointers, never 0 (${streams.map((v) => `0x${v.toString(16)}`).join(', ')})`;
  if (decisive.length > 0)
    return {
      kind: 'torch_npu',
      signals: pointers ? [...decisive, pointerSignal] : decisive,
      pad: npuRequestPad(e.tables),
    };
  // What every recent PyTorch writes, each read only while the file still looks like torch_npu's.
  const cudaMarked = () => 'allocator_settings' in e.top || hasTimes(e.cols);
  if (!pointers || e.cols.length === 0 || cudaMarked() || hasFrame(e.stacks, CUDA_FRAME) !== null)
    return { kind: 'pytorch', signals: [] };
  // A pad of 0 is what every CUDA file shows, and on the NPU only Ascend950 with CANN >= 9.1,
  // whose torch_npu writes workspace entries: pointer streams alone do not outweigh it.
  const pad = npuRequestPad(e.tables);
  if (pad.bytes === 0) return { kind: 'pytorch', signals: [] };
  return {
    kind: 'torch_npu',
    signals: [
      pointerSignal,
      'no allocator_settings and no time_us, which PyTorch writes since 2.3 and 2.2',
      'not certain: a PyTorch file from before 2.2 with every allocation on side streams and no CUDA frame looks the same',
    ],
    pad,
  };
}

/** Raw stream values of every segment and every trace entry. */
function streamsIn(cols: TraceColumns, tables: SegmentTables): number[] {
  const used = new Uint8Array(cols.streams.length);
  for (let i = 0; i < cols.length; i++) used[cols.stream[i]!] = 1;
  const out = new Set(tables.segments.map((s) => s.stream));
  used.forEach((u, code) => {
    if (u === 1) out.add(cols.streams[code]!);
  });
  return [...out];
}

/**
 * Bytes the caching allocator adds to every request before rounding it: torch_npu's `AddPadSize()`,
 * as the file's blocks tell it (request-pad.ts); PyTorch's CUDA allocator adds nothing.
 */
export function requestPad(p: Producer): number {
  return p.pad?.bytes ?? 0;
}

function workspaceEntries(cols: TraceColumns): number {
  let n = 0;
  for (let i = 0; i < cols.length; i++) if (cols.action[i] === Action.workspace_snapshot) n++;
  return n;
}

function npuFrame(stacks: StackTable): string | null {
  return hasFrame(stacks, NPU_FRAME);
}

/** The first frame whose file or function matches, as a reader would name it; null if none. */
function hasFrame(stacks: StackTable, pattern: RegExp): string | null {
  for (let i = 0; i < stacks.frameCount; i++) {
    const f = stacks.frame(i);
    if (pattern.test(f.filename)) return f.filename;
    if (pattern.test(f.name)) return f.name.split('(')[0]!;
  }
  return null;
}

function hasTimes(cols: TraceColumns): boolean {
  for (let i = 0; i < cols.length; i++) if (!Number.isNaN(cols.timeUs[i]!)) return true;
  return false;
}
