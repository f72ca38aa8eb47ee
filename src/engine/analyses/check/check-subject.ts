/**
 * What `memlens check` judges: one snapshot or a whole run, in the shape a run already has
 * (run-report.ts): each snapshot's plain, cacheable result (cell-result.ts), the sites that grow
 * across windows, the OOMs. A lone file also brings its leak analysis, which needs the model.
 */
import type { FragBlame } from '../fragmentation/frag-blame.js';
import type { DeviceLeaks } from '../leaks/leaks.js';
import type { CellResult } from '../run/cell-result.js';
import type { RunReport } from '../run/run-report.js';

export interface CheckSubject {
  /** The file or run directory, as the user named it. */
  label: string;
  /** A directory of snapshots (ranks × steps), or a single file. */
  kind: 'run' | 'file';
  report: RunReport;
  /** Each readable snapshot's result, by file. */
  results: Map<string, CellResult>;
  /** A single file's leaks per device (null for a run: its growth across windows says it). */
  leaks: DeviceLeaks[] | null;
  /**
   * The segments and pinning sites behind the fragmentation figure, at its place
   * (`fragmentationPlace`), when the caller read them: they need that file's model.
   */
  fragmentation?: { place: Place; blame: FragBlame } | null;
}

/** Where in the subject a figure was found: the file, and for a run the rank and step. */
export interface Place {
  file: string;
  device: number;
  rank: number | null;
  step: number | null;
}

/** A site that accounts for part of a figure (or of its change against the baseline). */
export interface BlamedSite {
  bytes: number;
  /** Innermost first, the user's frames. */
  frames: { filename: string; line: number; name: string }[];
  /** Fragmentation: its blocks keep this many of the listed segments reserved, `bytes` free in them. */
  segments?: number;
}

/** A segment whose free bytes count in a fragmentation figure: reserved, holding a tensor, partly free. */
export interface BlamedSegment {
  address: number;
  size: number;
  /** Its free list's name: "large pool, stream 0". */
  pool: string;
  used_bytes: number;
  free_bytes: number;
}

/** "rank 2, step 5", "rank 1", or "" (a lone file names no place): how a place is named in a run. */
export function placeText(p: Place | null): string {
  if (p === null) return '';
  const parts = [
    ...(p.rank !== null ? [`rank ${p.rank}`] : []),
    ...(p.step !== null ? [`step ${p.step}`] : []),
  ];
  return parts.join(', ');
}
