import type { SnapshotDiff } from '../../../src/engine/analyses/diff/index.js';
import type { DeviceSimulation, ReplaySummary } from '../../../src/engine/simulate/index.js';
import type { Source } from './protocol.js';

/** What-if and Compare panels' messages (merged into protocol.ts's Queries). */
export interface WhatIfArgs {
  device: number;
  /** PYTORCH_CUDA_ALLOC_CONF syntax, on top of the recorded settings; '' = none (recorded only). */
  set: string;
  /** Bytes; null: from an oom entry, else unlimited (the CLI's default). */
  capacity: number | null;
  torchVersion: string;
}

export interface CompareArgs {
  device: number;
  /** File B; the open file is A. Loaded once and kept while it stays the one compared. */
  other: Source;
  top: number;
  fullStacks: boolean;
}

export interface WhatIfQueries {
  /** `memlens simulate --set` on one device: recorded and what-if runs side by side. */
  whatIf: { args: WhatIfArgs; result: DeviceSimulation };
  /** The sweep's settings strings, in the order `sweepRun` indexes them. */
  sweepPlan: { args: { torchVersion: string }; result: string[] };
  sweepRun: { args: Omit<WhatIfArgs, 'set'> & { index: number }; result: ReplaySummary };
  /** `memlens diff A B` with A the open file's device; progress while B loads. */
  compare: { args: CompareArgs; result: SnapshotDiff };
}
