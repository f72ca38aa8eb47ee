/**
 * Whether two dumps come from one process. PyTorch keeps one trace ring per process and a dump
 * copies it without clearing it (torch.cuda.memory._snapshot), so a later dump of the same process
 * starts with the same entries as an earlier one until the ring wraps. Entries carry the time in
 * microseconds since PyTorch 2.2: two processes never write the same first entries to the
 * microsecond, while without times the ranks of one program may well allocate the same sizes at
 * the same addresses, so only timed entries are compared.
 */
import type { DeviceModel } from '../../model/snapshot.js';

export interface TraceHead {
  device: number;
  /** `time:action:address:size` of the device's first entries (at most HEAD_ENTRIES). */
  keys: string[];
}

const HEAD_ENTRIES = 8;
/** Fewer shared entries than this could match by chance (a trace of one or two entries). */
const MIN_SHARED = 2;

/** The device's first entries, or nothing where they carry no time. */
export function traceHead(d: DeviceModel): TraceHead[] {
  const t = d.trace;
  const n = Math.min(HEAD_ENTRIES, t.length);
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(t.timeUs[i]!)) return [];
    keys.push(`${t.timeUs[i]}:${t.action[i]}:${t.addr[i]}:${t.size[i]}`);
  }
  return keys.length >= MIN_SHARED ? [{ device: d.device, keys }] : [];
}

/**
 * One process's two dumps: a device's trace starts with the same timed entries in both (the
 * shorter head a prefix of the longer). false says nothing either way: the ring may have wrapped.
 */
export function sameProcess(a: TraceHead[], b: TraceHead[]): boolean {
  return a.some((x) => {
    const y = b.find((h) => h.device === x.device);
    if (y === undefined) return false;
    const n = Math.min(x.keys.length, y.keys.length);
    return n >= MIN_SHARED && x.keys.slice(0, n).every((k, i) => k === y.keys[i]);
  });
}
