/**
 * One recorded cycle as `memlens cycles` and the web app show it: what it held, how, and where
 * each tensor is in the snapshot of its window. The shells find the window (cycle-windows.ts)
 * and load it; this ties the parts together.
 */
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type DeviceGc, type GcOptions, gcBurstsOf } from '../gc/gc-bursts.js';
import type { CycleGraph, CycleTensor } from './cycle-file.js';
import { cudaIndex, linkTensor, NOT_CUDA, type TensorLink } from './cycle-links.js';
import type { PathHop } from './cycle-paths.js';
import { summarizeCycle } from './cycle-summary.js';

export type WindowMatch =
  /** The snapshot's trace spans the cycle's time (`time`), or only its window names the cycle's step. */
  { file: string; by: 'time' | 'step'; snapshot: Snapshot } | { file: null; reason: string };

/** A tensor as the file gives it (shape, dtype, bytes, data_ptr, device, stack), its path and its links. */
export interface CycleTensorReport extends Omit<TensorLink, 'tensor'>, CycleTensor {
  id: number;
  label: string;
  /** False for a view of a storage another tensor of the graph already counts. */
  counted: boolean;
  hops: PathHop[];
  path_words: string;
}

/** The file's facts (rank, pid, time, step, …) and what the analyses found. */
export interface CycleReport extends Omit<CycleGraph, 'nodes' | 'edges' | 'cycle'> {
  nodes: number;
  edges: number;
  cycle_nodes: number;
  /** Bytes of the distinct tensor storages the garbage held. */
  bytes: number;
  /** The largest tensor's path: the cycle in one line. */
  path_words: string | null;
  /** The snapshot of the cycle's window, and how it was matched; null with the reason. */
  snapshot: { file: string; by: 'time' | 'step' } | null;
  snapshot_reason: string | null;
  tensors: CycleTensorReport[];
}

/** Whether any tensor of the graph is in CUDA memory: only those are in a snapshot's window. */
export function holdsCudaTensors(g: CycleGraph): boolean {
  return g.nodes.some((n) => n.tensor !== null && cudaIndex(n.tensor.device) !== null);
}

/** The match of a graph whose tensors no snapshot holds. */
export const NO_CUDA_TENSOR: WindowMatch = {
  file: null,
  reason: 'no CUDA tensor: memory snapshots record CUDA memory only',
};

/** GC bursts of each device, computed once for every cycle and tensor linked to one snapshot. */
export function gcCache(s: Snapshot, opts: GcOptions = {}): (d: DeviceModel) => DeviceGc {
  const cache = new Map<DeviceModel, DeviceGc>();
  return (d) => {
    let gc = cache.get(d);
    if (gc === undefined) {
      gc = gcBurstsOf(s, d, opts);
      cache.set(d, gc);
    }
    return gc;
  };
}

/**
 * `gcOf`: the window snapshot's GC bursts per device, to share between the cycles of one snapshot
 * (gcCache); made here when not given.
 */
export function cycleReport(
  g: CycleGraph,
  match: WindowMatch,
  gcOf?: (d: DeviceModel) => DeviceGc,
): CycleReport {
  const summary = summarizeCycle(g);
  const bursts = match.file !== null ? (gcOf ?? gcCache(match.snapshot)) : null;
  const tensors = summary.tensors.map((t): CycleTensorReport => {
    // A CPU tensor is in no snapshot, whichever window was found.
    const reason =
      cudaIndex(t.device) === null ? NOT_CUDA(t.device) : match.file === null ? match.reason : null;
    const { tensor: _, ...rest }: TensorLink =
      match.file !== null && reason === null
        ? linkTensor(match.snapshot, t.id, t, g.time_us, bursts!)
        : { tensor: t.id, allocation: null, allocation_reason: reason, burst: null, burst_reason: reason };
    return {
      id: t.id,
      label: t.label,
      shape: t.shape,
      dtype: t.dtype,
      bytes: t.bytes,
      data_ptr: t.data_ptr,
      device: t.device,
      stack: t.stack,
      counted: t.counted,
      hops: t.path.hops,
      path_words: t.path_words,
      ...rest,
    };
  });
  const { nodes, edges, cycle, ...facts } = g;
  return {
    ...facts,
    nodes: nodes.length,
    edges: edges.length,
    cycle_nodes: cycle.length,
    bytes: summary.bytes,
    path_words: summary.path_words,
    snapshot: match.file === null ? null : { file: match.file, by: match.by },
    snapshot_reason: match.file === null ? match.reason : null,
    tensors,
  };
}
