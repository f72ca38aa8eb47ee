import type { DeviceCategories } from '../../../src/engine/analyses/categories/index.js';
import type { CycleCitation, WindowCycle } from '../../../src/engine/analyses/cycles/index.js';
import type { DiagnosisSoFar } from '../../../src/engine/analyses/diagnosis/index.js';
import type { DeviceFragmentation } from '../../../src/engine/analyses/fragmentation/index.js';
import type { DeviceGc } from '../../../src/engine/analyses/gc/index.js';
import type { DeviceLeaks } from '../../../src/engine/analyses/leaks/index.js';
import type { OomReport } from '../../../src/engine/analyses/oom/index.js';
import type { FlameTree } from '../../../src/engine/views/flame/index.js';
import type { DiagnosisPace } from './diagnosis-stream.js';

/** The flame graph's and the analysis panels' messages (merged into protocol.ts's Queries). */
export interface FlameAt {
  device: number;
  /** Trace entry whose live memory is shown; null: the allocated peak. */
  entry: number | null;
  fullStacks: boolean;
}

/** One allocation under a flame-graph node. */
export interface FlameAllocation {
  id: number;
  bytes: number;
  alloc_entry: number;
}

export interface AnalysisQueries {
  /** Nested so the worker keeps its copy (top-level typed arrays are transferred away). */
  flame: { args: FlameAt; result: { tree: FlameTree } };
  flameAllocations: {
    args: FlameAt & { node: number; limit: number };
    result: { total: number; rows: FlameAllocation[] };
  };
  /** The speedscope profile of live memory after the entry, as JSON text. */
  speedscope: { args: { device: number; entry: number; name: string }; result: string };
  /** `memlens leaks`; marker as --marker, range as --range (trace entries a..b); null: not given. */
  leaks: {
    args: { device: number; marker?: string | null; range?: [number, number] | null };
    result: DeviceLeaks;
  };
  /** `cycles`: the run's recorded cycles of this window: each burst's are in the result's `cycles`. */
  gc: {
    args: { device: number; file?: string; cycles?: WindowCycle[] };
    result: DeviceGc & { cycles: CycleCitation[][] };
  };
  frag: { args: { device: number; entry: number }; result: DeviceFragmentation };
  /** `memlens oom`; capacity and request in bytes as --capacity / --request (null: not given). */
  oom: { args: { device: number; capacity?: number | null; request?: number | null }; result: OomReport[] };
  categories: { args: { device: number; points: number }; result: DeviceCategories };
  /** `memlens diagnose`'s findings, every device's and their order; file: the name the suggested commands use. */
  /** `cycles`: the served run's recorded cycles of this snapshot's window, cited by the GC finding. */
  /** `capacity`: the GPU's total memory in bytes (--capacity), for the OOM verdict. */
  /** `partial`: what is known so far, sent after each analysis; the result's `pending` is empty. */
  diagnosis: {
    args: { file: string; cycles?: WindowCycle[]; capacity?: number | null };
    result: DiagnosisSoFar;
    partial: DiagnosisSoFar;
  };
  /** For the end-to-end tests: slow the diagnosis while an analysis is pending (null: full speed). */
  diagnosisPace: { args: DiagnosisPace | null; result: null };
}
