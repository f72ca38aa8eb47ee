/**
 * What one recorded cycle held: the bytes of its distinct tensor storages and, for each tensor,
 * how the cycle reaches it. This is the part of a cycle that needs no snapshot.
 */
import type { CycleGraph, CycleTensor } from './cycle-file.js';
import { pathWords, type TensorPath, tensorPaths } from './cycle-paths.js';

export interface CycleTensorSummary extends CycleTensor {
  /** The tensor's node id and label. */
  id: number;
  label: string;
  /** False when another tensor of the graph has the same data_ptr (a view): its bytes count once. */
  counted: boolean;
  path: TensorPath;
  path_words: string;
}

export interface CycleSummary {
  /** Bytes of distinct tensor storages (by data_ptr; the largest tensor at a pointer counts). */
  bytes: number;
  tensors: CycleTensorSummary[];
  /** The path of the largest tensor: the cycle in one line. */
  path_words: string | null;
}

export function summarizeCycle(g: CycleGraph): CycleSummary {
  const byPtr = new Map<number, number>();
  const tensors = g.nodes.filter((n) => n.tensor !== null);
  for (const n of tensors) {
    const t = n.tensor!;
    const holder = byPtr.get(t.data_ptr);
    if (holder === undefined || tensors.find((x) => x.id === holder)!.tensor!.bytes < t.bytes)
      byPtr.set(t.data_ptr, n.id);
  }
  const paths = new Map(tensorPaths(g).map((p) => [p.tensor, p]));
  const out: CycleTensorSummary[] = tensors.map((n) => ({
    id: n.id,
    label: n.label,
    ...n.tensor!,
    counted: byPtr.get(n.tensor!.data_ptr) === n.id,
    path: paths.get(n.id)!,
    path_words: pathWords(paths.get(n.id)!, g),
  }));
  const bytes = out.reduce((sum, t) => sum + (t.counted ? t.bytes : 0), 0);
  const largest = [...out].sort((a, b) => b.bytes - a.bytes || a.id - b.id)[0];
  return { bytes, tensors: out, path_words: largest?.path_words ?? null };
}
