/** Trace events as the allocator model emits them, before they are shaped into snapshot dicts. */
import { Action, KNOWN_ACTIONS } from '../../src/engine/model/index.js';
import type { Stack } from './frames.js';

// The model's action codes and names: the generator writes the format's own vocabulary.
export const ALLOC = Action.alloc;
export const FREE_REQUESTED = Action.free_requested;
export const FREE_COMPLETED = Action.free_completed;
export const SEGMENT_ALLOC = Action.segment_alloc;
export const SEGMENT_FREE = Action.segment_free;
export const SEGMENT_MAP = Action.segment_map;
export const SEGMENT_UNMAP = Action.segment_unmap;
export const OOM = Action.oom;

export const ACTION_NAMES = KNOWN_ACTIONS;

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
