/**
 * The standard what-if set of `memlens simulate --sweep`: expandable segments on and off, a few
 * `max_split_size_mb` and `roundup_power2_divisions` values, each on top of the recorded settings.
 */
import { applyConf, describeSettings, type SimSettings } from './settings.js';

const SWEEP_CHANGES = [
  '',
  'expandable_segments:True',
  'expandable_segments:False',
  'max_split_size_mb:64',
  'max_split_size_mb:256',
  'max_split_size_mb:1024',
  'roundup_power2_divisions:4',
  'roundup_power2_divisions:8',
  'expandable_segments:True,roundup_power2_divisions:4',
];

/** Distinct settings to try, the recorded ones first. */
export function sweepSettings(recorded: SimSettings): SimSettings[] {
  const seen = new Set<string>();
  const out: SimSettings[] = [];
  for (const change of SWEEP_CHANGES) {
    const s = applyConf(cloneSettings(recorded), change);
    const key = describeSettings(s);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(s);
  }
  return out;
}

export function cloneSettings(s: SimSettings): SimSettings {
  return { ...s, divisions: [...s.divisions] };
}
