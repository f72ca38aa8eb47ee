import type { Snapshot } from '../../model/snapshot.js';

/**
 * How the diagnosis names a device ("cuda:2"): one place, so another accelerator's files (an
 * NPU's "npu:2") are named their way everywhere the diagnosis names a device.
 */
export function deviceLabel(_s: Snapshot, device: number): string {
  return `cuda:${device}`;
}
