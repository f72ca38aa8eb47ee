import type { SnapshotSummary } from '../../../src/engine/analyses/summary/index.js';
import type { AllocationDetails } from '../../../src/engine/derived/index.js';
import type { Producer } from '../../../src/engine/model/index.js';
import type { PoolGroup, PoolStateReport } from '../../../src/engine/views/pools/index.js';
import type {
  HoverFacts,
  OomMark,
  StepMarker,
  TimelineAxis,
  TimelineLod,
  TimelineRequest,
} from '../../../src/engine/views/timeline/index.js';
import type { LayerSize } from '../timeline/paint-layer.js';
import type { TimelineStack, ZoomMode } from '../url-state.js';
import type { AnalysisQueries } from './analysis-protocol.js';
import type { PoolPart } from './pool-timeline.js';
import type { RunQueries } from './run-protocol.js';
import type { TableQueries } from './table-protocol.js';
import type { WhatIfQueries } from './what-if-protocol.js';

/**
 * Messages between the page and the engine worker. The worker holds the one Snapshot model and
 * answers questions about it; the page only ever sees answers sized for the screen.
 */
export type Source =
  | { url: string; name: string }
  | { file: File; name: string }
  /**
   * A report page's embedded snapshot, as the page holds it: the ids of its data elements, and
   * the snapshot file's own size. The client sends it as `text` (client.ts).
   */
  | { embedded: string[]; name: string; size: number }
  /**
   * That snapshot as the worker gets it: a port sending the base64 text of its gzipped bytes, part
   * by part as the page's parser reads it (text-port.ts), and a second one sending it again, read
   * only when the gzip file holds several members (gunzip-members.ts).
   */
  | { text: MessagePort; again: MessagePort; name: string; size: number };

export interface DeviceInfo {
  device: number;
  /** How the page names the device: `npu:N` for a torch_npu file, else `cuda:N`. */
  label: string;
  entries: number;
  hasTime: boolean;
  /** Whether the trace holds any entry but `snapshot` markers (false: a dump with no history). */
  hasHistory: boolean;
  /** time_us of the trace's first timed entry: the app shows times from it (null: no time_us). */
  startUs: number | null;
  /** Whole trace on each axis. */
  extent: Record<TimelineAxis, [number, number]>;
}

/** What the page needs at once; the summary (~0.3 s on a 1 GB trace) and each device's streams are their own queries, after the first timeline. */
export interface Loaded {
  devices: DeviceInfo[];
  /** Who wrote the file: the page's own sentences are said in its words (torch_npu: the NPU's). */
  producer: Producer;
  /** Trace entries in the file, and how many the WebAssembly entry scanner read (the rest: JS). */
  entries: number;
  scannedEntries: number;
}

/** One trace entry in words and numbers (the event line above the pool state). */
export interface EntryInfo {
  entry: number;
  action: string;
  address: number | null;
  size: number | null;
  stream: number;
  time_us: number | null;
  /** µs since the trace's first timed entry (what the app shows; never raw epoch µs), else null. */
  since_start_us: number | null;
  allocated_bytes: number;
  active_bytes: number;
  reserved_bytes: number;
  /** The allocation this entry opened or closed, -1 for segment and other entries. */
  alloc: number;
  /** An `oom` entry: the bytes CUDA said were free (its `device_free`), else null. */
  device_free_bytes: number | null;
}

/**
 * What a selected entry and allocation show, in one answer (a click must not wait for four
 * queries one after another): the entry line, the allocation (picked under the pointer when
 * asked), its details with its offset in the stack drawn, and the pool state after the entry.
 */
export interface Selected {
  entry: EntryInfo | null;
  alloc: number | null;
  details: (AllocationDetails & { offset: number }) | null;
  /** null when not asked for (the entry did not change). */
  pool: PoolStateReport | null;
}

export interface Queries extends TableQueries, AnalysisQueries, WhatIfQueries, RunQueries {
  /**
   * diagnose: the diagnosis the page will ask for as soon as it has this answer (the Diagnosis tab
   * it lands on), started at once after the load: the first finding does not wait on the page.
   */
  load: { args: { source: Source; diagnose?: AnalysisQueries['diagnosis']['args'] }; result: Loaded };
  summary: { args: Record<string, never>; result: SnapshotSummary };
  /** stream: one CUDA stream's allocations and totals (null: the whole device). */
  timeline: {
    /**
     * search: the timeline search term, whose matches colour the merged runs they fall in.
     * paint: the worker also paints the answer into `bitmap` at this size (paint-layer.ts).
     */
    args: {
      device: number;
      request: TimelineRequest;
      stream?: number | null;
      search?: string;
      paint?: LayerSize;
      /**
       * 'segments': the segment timeline (runs name pieces of reserved memory); 'pools': the
       * (pool, stream) envelopes (runs name allocations, or an envelope's free part: pool-envelopes.ts
       * freePartCode). Stream and search apply to the allocations and pools stacks (pools: only the
       * stream's groups are stacked); the segments stack is the whole device's.
       */
      stack?: TimelineStack;
      /** 'horizontal': the y axis keeps the whole trace's top; else it follows the window's. */
      zoom?: ZoomMode;
      /**
       * With paint, on the allocations stack: first send the window's outline (timelineOutline,
       * painted) as a partial answer, for a timeline that shows nothing yet (the stacked answer
       * can take a second).
       */
      outline?: boolean;
    };
    /** groups: the pools timeline's (pool, stream) groups, in stacking order. */
    result: TimelineLod & { bitmap?: ImageBitmap; groups?: PoolGroup[] };
    partial: TimelineLod & { bitmap: ImageBitmap };
  };
  /** What the pools timeline draws at `bytes` after `entry`: an allocation or a free envelope part (null: above the stack). */
  part: {
    /** stream: the stream whose groups the pools timeline draws (null: all). */
    args: { device: number; entry: number; bytes: number; stream?: number | null };
    result: PoolPart | null;
  };
  /** The piece of reserved memory drawn at `bytes` after `entry` in the segment timeline (null: none). */
  piece: {
    args: { device: number; entry: number; bytes: number };
    result: { address: number; size: number; start: number; end: number } | null;
  };
  markers: { args: { device: number; axis: TimelineAxis }; result: StepMarker[] };
  /** The device's `oom` entries on the axis (the timeline and minimap mark them). */
  ooms: { args: { device: number; axis: TimelineAxis }; result: OomMark[] };
  /** The hover line's time since the trace start and the allocation under the pointer (alloc: null for none). */
  hover: { args: { device: number; entry: number; alloc: number | null }; result: HoverFacts };
  /** Raw CUDA stream ids of the device's allocations and segments, ascending (after the first timeline, not in load's answer). */
  streams: { args: { device: number }; result: number[] };
  /** The same stretch of the trace on the other axis (axis-window.ts). */
  axisWindow: {
    args: { device: number; window: [number, number]; from: TimelineAxis; to: TimelineAxis };
    result: [number, number];
  };
  details: {
    /** offset: bytes below it in the `stack` drawn (allocations when absent) for `stream` (null: the whole device). */
    args: { device: number; alloc: number; entry: number; stream?: number | null; stack?: TimelineStack };
    result: AllocationDetails & { offset: number };
  };
  /**
   * pick: choose the allocation drawn at `bytes` after the entry (as `pick`) instead of `alloc`;
   * pool: also the pool state. stream: the stream the timeline draws (null: the whole device).
   */
  select: {
    args: {
      device: number;
      entry: number;
      alloc: number | null;
      stream: number | null;
      /** The stack the timeline draws, which the details' offset is in (allocations when absent). */
      stack?: TimelineStack;
      pool: boolean;
      pick: { bytes: number } | null;
    };
    result: Selected;
  };
  entry: { args: { device: number; entry: number }; result: EntryInfo | null };
}

export type QueryName = keyof Queries;

/** What a query sends before its answer (the diagnosis: its findings so far); never for most. */
export type PartialOf<K extends QueryName> = Queries[K] extends { partial: infer P } ? P : never;

export type Request = { [K in QueryName]: { id: number; query: K; args: Queries[K]['args'] } }[QueryName];

export type Response =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string }
  | { id: number; progress: { bytes: number; total: number | null } }
  | { id: number; partial: unknown };
