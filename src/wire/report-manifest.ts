import type { RunState } from './run-state.js';

/**
 * What a `memlens report` page carries besides the app, read by the page first
 * (`<script id="memlens-report" type="application/json">`, web/src/embedded-data.ts). Each file's
 * bytes are gzipped and base64-encoded in the elements whose ids `data` lists, in order.
 */
export interface ReportManifest {
  /** The memlens version that wrote the report. */
  memlens: string;
  /** What it was made from: the file's or the run directory's name (the page's title). */
  source: string;
  files: { name: string; label: string; size: number; data: string[] }[];
  /** A run's report (what `memlens view DIR` serves the Run page), names aligned with its snapshots; null for one file. */
  run: RunState | null;
  /**
   * The run's recorded reference cycles (memlens record --cycles): each one's JSON as `memlens
   * view DIR` serves it (GET api/cycles), gzipped in the elements `data` lists; [] for one file.
   */
  cycles: { name: string; size: number; data: string[] }[];
  /**
   * What of the run was left out of the page, with why (over the byte budget, or undecodable):
   * snapshots, and recorded cycles (`kind`).
   */
  omitted: { name: string; label: string; size: number; reason: string; kind: 'snapshot' | 'cycle' }[];
}
