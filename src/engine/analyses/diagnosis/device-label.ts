import type { Snapshot } from '../../model/snapshot.js';
import { isNpu } from '../producer/wording.js';

/**
 * How the diagnosis names a device ("cuda:2", "npu:2" in a torch_npu file): one place, so a device
 * is named the same everywhere the diagnosis names it.
 */
export function deviceLabel(s: Snapshot, device: number): string {
  return `${isNpu(s.producer) ? 'npu' : 'cuda'}:${device}`;
}
