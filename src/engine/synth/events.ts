/** Trace events as the allocator model emits them, before they are shaped into snapshot dicts. */
import type { Stack } from './frames.js';

export const ALLOC = 0;
export const FREE_REQUESTED = 1;
export const FREE_COMPLETED = 2;
export const SEGMENT_ALLOC = 3;
export const SEGMENT_FREE = 4;
export const SEGMENT_MAP = 5;
export const SEGMENT_UNMAP = 6;
export const OOM = 7;

export const ACTION_NAMES = [
  'alloc',
  'free_requested',
  'free_completed',
  'segment_alloc',
  'segment_free',
  'segment_map',
  'segment_unmap',
  'oom',
] as const;

export type ActionName = (typeof ACTION_NAMES)[number];

export interface SimEvent {
  readonly action: number;
  /** Block / segment address; for OOM the free device memory (`device_free`). */
  readonly addr: number;
  readonly size: number;
  readonly stream: number;
  readonly time: number;
  /** Id of the captured traceback: events with the same id share one frames list, as in PyTorch. */
  readonly capture: number;
  readonly stack: Stack | null;
  /** The allocator's counters right after this event: requested bytes of active_allocated
   *  blocks, and reserved bytes. The expected trace curves come from these. */
  readonly allocated: number;
  readonly reserved: number;
}

/** Microsecond clock shared by the workload (which advances it) and the allocator (which stamps). */
export class Clock {
  constructor(public now: number) {}

  advance(us: number): void {
    this.now += us;
  }
}

/** An `external_annotations` record (record_function START/END). */
export interface Annotation {
  readonly stage: 'START' | 'END';
  readonly name: string;
  readonly time: number;
}
