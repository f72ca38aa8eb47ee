/**
 * Where in a run a grown site first reached the bytes it holds at the peak: the peak is often
 * steps after the change that caused it (a buffer kept from step 3 peaks with step 5's
 * activations), and the step where it appeared is where to look.
 */
import { siteKey } from '../run/growth.js';
import type { BlamedSite, CheckSubject, Place } from './check-subject.js';

export function firstAppearance(
  subject: CheckSubject,
  peak: Place,
  site: BlamedSite,
  bytes: number,
): Place | null {
  const key = siteKey(site.frames.map((f) => ({ ...f, extra: undefined })));
  const windows = subject.report.snapshots
    .filter((s) => s.rank === peak.rank && s.step !== null)
    .sort((a, b) => a.step! - b.step!);
  for (const s of windows) {
    const side = subject.results.get(s.file)?.side.devices.find((d) => d.device === peak.device);
    const held = side?.at_peak.sites.find((x) => siteKey(x.frames) === key)?.bytes ?? 0;
    if (held >= bytes) return { file: s.file, device: peak.device, rank: s.rank, step: s.step };
  }
  return null;
}
