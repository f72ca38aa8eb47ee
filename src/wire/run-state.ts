import type { RunReport } from '../engine/analyses/run/index.js';

/** What GET api/run answers (the server's run-service.ts; the page's views/run/run-data.ts). */
export interface RunState {
  /** Rises whenever the report changes; `?since=` a version already held answers without the report. */
  version: number;
  watching: boolean;
  /** Files decoded of those found, while a batch is being decoded; null when idle. */
  progress: { done: number; total: number } | null;
  /** Without each snapshot's device summaries (the rows carry their figures): 64 × 100 cells stay small. */
  report: RunReport | null;
  /** The served name and URL of each of the report's snapshots (aligned with report.snapshots). */
  names: string[];
  urls: string[];
}
