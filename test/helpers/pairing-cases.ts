import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { WriteOptions } from '../../scripts/synth/generate.js';

/** The corpus folder, and its pickles (none where ../shared is absent). */
export const CORPUS = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus');
export const corpusPickles = existsSync(CORPUS)
  ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle'))
  : [];

/**
 * Generated files for the allocation pairing's tests: ring-buffer overflow gives orphan frees and
 * blocks from before recording; OOM and pending frees the rest.
 */
export const PAIRING_CASES: [string, WriteOptions][] = [
  ['steady loop', { events: 3000, seed: 31 }],
  ['ring buffer overflowed', { events: 3000, seed: 32, ringBufferOverflow: true }],
  ['pending frees, private pool', { events: 3000, seed: 33, pendingFrees: true, privatePool: true }],
  ['two devices, streams', { events: 3000, seed: 34, devices: 2, streams: 3 }],
  ['PyTorch 2.0 layout', { events: 2000, seed: 35, legacy: 'v2.0' }],
];
