/**
 * What the result cache keeps per snapshot content: the run's result of the file, or why it
 * could not be decoded (remembered too, so a rerun does not decode a broken file again).
 */
import type { CellResult } from '../../engine/analyses/run/index.js';
import { RUN_FIGURES } from '../../engine/analyses/run/index.js';

export type CellOutcome = { result: CellResult } | { error: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const arrayOf = (v: unknown, item: (x: unknown) => boolean): boolean => Array.isArray(v) && v.every(item);

/** The figures a run reads of each device (run-table.ts) are numbers. */
function isDeviceSummary(v: unknown): boolean {
  if (!isObject(v)) return false;
  const keys = ['device', 'trace_entries', 'ooms', ...Object.values(RUN_FIGURES)];
  return keys.every((k) => typeof v[k] === 'number');
}

function isMoment(v: unknown): boolean {
  return isObject(v) && typeof v.after_entry === 'number' && arrayOf(v.sites, isObject);
}

function isDeviceSide(v: unknown): boolean {
  return (
    isObject(v) &&
    typeof v.device === 'number' &&
    isObject(v.figures) &&
    isMoment(v.at_dump) &&
    isMoment(v.at_peak)
  );
}

function isHead(v: unknown): boolean {
  return isObject(v) && typeof v.device === 'number' && arrayOf(v.keys, (k) => typeof k === 'string');
}

function isOoms(v: unknown): boolean {
  return isObject(v) && typeof v.device === 'number' && arrayOf(v.reports, isObject);
}

/**
 * Whether a value read back from the cache has the shape a run relies on. The entry's checksum
 * already vouches for its bytes; this catches an entry a buggy or foreign writer gave a valid one.
 */
export function isCellOutcome(v: unknown): v is CellOutcome {
  if (!isObject(v)) return false;
  if ('error' in v) return typeof v.error === 'string' && !('result' in v);
  const r = v.result;
  return (
    isObject(r) &&
    arrayOf(r.devices, isDeviceSummary) &&
    isObject(r.side) &&
    arrayOf(r.side.devices, isDeviceSide) &&
    arrayOf(r.ooms, isOoms) &&
    arrayOf(r.history, (d) => typeof d === 'number') &&
    arrayOf(r.heads, isHead)
  );
}
