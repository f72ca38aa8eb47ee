/**
 * The fragmentation figure's account: the segments holding a tensor with the most free bytes at
 * the reserved peak, and the sites whose blocks keep them reserved (`fragmentationBlame`, read by
 * the caller from the model of the file where the figure was largest).
 */
import { listName } from '../fragmentation/fragmentation.js';
import type { BlamedSegment, BlamedSite, CheckSubject, Place } from './check-subject.js';

export interface FragAccount {
  sites: BlamedSite[];
  segments: BlamedSegment[];
  /** The trace entry `memlens frag --at` shows that state after (null: the dump). */
  at_entry: number | null;
}

/** The account at `place`, when the subject carries one for it; none otherwise. */
export function fragAccount(subject: CheckSubject, place: Place, top: number): FragAccount {
  const f = subject.fragmentation;
  if (f == null || f.place.file !== place.file || f.place.device !== place.device)
    return { sites: [], segments: [], at_entry: null };
  const { blame } = f;
  return {
    sites: blame.sites.slice(0, top).map((s) => ({
      bytes: s.free_bytes,
      frames: s.frames.map(({ filename, line, name }) => ({ filename, line, name })),
      segments: s.segments,
    })),
    segments: blame.segments.slice(0, top).map((g) => ({
      address: g.address,
      size: g.size,
      pool: listName(g),
      used_bytes: g.used_bytes,
      free_bytes: g.gap_bytes,
    })),
    at_entry: blame.after_entry >= 0 && !blame.exact ? blame.after_entry : null,
  };
}
