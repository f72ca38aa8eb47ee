import { formatBytes, formatCount } from '../../src/engine/base/index.js';

export { formatBytes, formatCount };

/** "1.50 MiB" with the exact byte count for the hover title. */
export function exactBytes(n: number): string {
  return `${formatCount(n)} bytes`;
}

export function hex(n: number | null): string {
  return n === null ? '—' : `0x${n.toString(16)}`;
}
