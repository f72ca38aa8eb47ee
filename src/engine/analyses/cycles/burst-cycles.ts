/**
 * The gc analysis's bursts next to the cycles `memlens record --cycles` recorded: for a burst,
 * the recorded cycles whose tensors it freed (linked by cycle-links.ts), so a burst the trace can
 * only call "reference cycles, probably" gets the cycle's own path in words.
 */
import { formatBytes, plural } from '../../base/format.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { type DeviceGc, type GcOptions, gcBurstsOf } from '../gc/gc-bursts.js';
import type { CycleGraph } from './cycle-file.js';
import { type CycleReport, cycleReport } from './cycle-report.js';

/** A recorded cycle whose collection the snapshot's trace spans (the shell matches them). */
export interface WindowCycle {
  file: string;
  graph: CycleGraph;
}

export interface CycleCitation {
  /** The cycle file. */
  file: string;
  rank: number;
  pid: number;
  collection: number;
  time_us: number;
  /** The cycle in one line (its largest tensor's path). */
  path_words: string | null;
  /** The cycle's tensors this burst freed, and their bytes. */
  tensors: number;
  bytes: number;
}

/**
 * For each device's bursts (`per`, computed with the caller's options; a device not in it gets
 * bursts by `gcOpts`), the recorded cycles of this snapshot's window whose tensors each burst freed.
 */
export function citeWindowCycles(
  s: Snapshot,
  file: string,
  per: DeviceGc[],
  cycles: WindowCycle[],
  gcOpts: GcOptions = {},
): CycleCitation[][][] {
  if (cycles.length === 0) return per.map((r) => r.bursts.map(() => []));
  const gcOf = (d: DeviceModel) => per.find((r) => r.device === d.device) ?? gcBurstsOf(s, d, gcOpts);
  const linked = cycles.map((c) => ({
    file: c.file,
    report: cycleReport(c.graph, { file, by: 'time', snapshot: s }, gcOf),
  }));
  return per.map((r) => burstCycles(linked, r.device, r.bursts.length));
}

/** For each of a device's `bursts` bursts (by index), the recorded cycles whose tensors it freed. */
export function burstCycles(
  linked: { file: string; report: CycleReport }[],
  device: number,
  bursts: number,
): CycleCitation[][] {
  const out: CycleCitation[][] = Array.from({ length: bursts }, () => []);
  for (const { file, report: r } of linked) {
    const freed = new Map<number, { tensors: number; bytes: number }>();
    for (const t of r.tensors) {
      if (t.burst === null || t.allocation?.device !== device || !t.counted) continue;
      const f = freed.get(t.burst.index) ?? { tensors: 0, bytes: 0 };
      f.tensors++;
      f.bytes += t.bytes;
      freed.set(t.burst.index, f);
    }
    for (const [index, f] of freed)
      out[index]?.push({
        file,
        rank: r.rank,
        pid: r.pid,
        collection: r.collection,
        time_us: r.time_us,
        path_words: r.path_words,
        ...f,
      });
  }
  return out;
}

/** "recorded cycle (rank 0, collection 3): AwaitableTensor.__dict__ → … → Tensor 2 MiB; freed here: 1 tensor, 2.00 MiB". */
export function citationText(c: CycleCitation): string {
  return `recorded cycle (rank ${c.rank}, collection ${c.collection}): ${c.path_words ?? 'no tensor path'}; freed here: ${plural(c.tensors, 'tensor')}, ${formatBytes(c.bytes)}`;
}
