import type { Allocations } from '../../model/allocations.js';

/**
 * The trace entry at which the user let go of an allocation: its free_requested (the allocated
 * curve drops there), else its free_completed; the trace length when it was still allocated at
 * the dump; -1 when it was freed before the recorded window began.
 */
export function releasedAt(a: Allocations, id: number): number {
  const requested = a.freeRequested[id]!;
  if (requested >= 0) return requested;
  return requested === -1 ? a.end[id]! : -1;
}

/** Still allocated (not freed by the user) at the dump. */
export function heldAtDump(a: Allocations, id: number, entries: number): boolean {
  return a.freeRequested[id] === -1 && a.end[id]! >= entries;
}
