import type { RunState } from '../server/run-state.js';

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
  /** Snapshots of the run left out of the page, with why (over the byte budget, or undecodable). */
  omitted: { name: string; label: string; size: number; reason: string }[];
}
