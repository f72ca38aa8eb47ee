/** Public API of the synthetic snapshot generator. */
import {
  concatChunks,
  PickleWriter,
  PyFloat,
  PyTuple,
  type PyValue,
  Shared,
  StreamedList,
  writeJson,
} from '../../src/engine/encode/index.js';
import type { ExpectedFigures } from './figures.js';
import { type ResolvedOptions, resolveOptions, type SynthOptions } from './options.js';
import { makePlan } from './sim.js';
import { buildSnapshot } from './snapshot.js';

export interface WriteOptions extends SynthOptions {
  /** 'pickle' (default) or 'json' (same structure; for small sizes). */
  format?: 'pickle' | 'json';
}

export interface WriteResult {
  readonly expected: ExpectedFigures;
  readonly options: ResolvedOptions;
  /** Bytes handed to the sink. */
  readonly bytesWritten: number;
}

export type Sink = (chunk: Uint8Array) => void;

/** Streams a snapshot to `sink` in chunks; memory stays bounded for any size. */
export function writeSnapshot(options: WriteOptions, sink: Sink): WriteResult {
  const resolved = resolveOptions(options, eventsFor(options));
  const build = buildSnapshot(makePlan(resolved));
  let bytesWritten = 0;
  const counting: Sink = (chunk) => {
    bytesWritten += chunk.length;
    sink(chunk);
  };
  if (options.format === 'json') writeJson(build.value, counting);
  else new PickleWriter(counting, { protocol: resolved.protocol }).dump(build.value);
  return { expected: build.expected(), options: resolved, bytesWritten };
}

/** The whole snapshot in memory, with its expected figures (tests, small sizes). */
export function generateSnapshotBytes(options: WriteOptions): WriteResult & { bytes: Uint8Array } {
  const chunks: Uint8Array[] = [];
  const result = writeSnapshot(options, (c) => chunks.push(c));
  return { ...result, bytes: concatChunks(chunks) };
}

/** The snapshot as a JSON string (small sizes). */
export function generateSnapshotJson(options: SynthOptions): { json: string; expected: ExpectedFigures } {
  const r = generateSnapshotBytes({ ...options, format: 'json' });
  return { json: new TextDecoder().decode(r.bytes), expected: r.expected };
}

/** Expected figures only: runs both simulation passes without encoding anything. */
export function computeExpected(options: SynthOptions): ExpectedFigures {
  const build = buildSnapshot(makePlan(resolveOptions(options, eventsFor(options))));
  drain(build.value);
  return build.expected();
}

/** Pulls every streamed list, so that pass 2 runs; items are dropped as they come. */
function drain(v: PyValue): void {
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array || v instanceof PyFloat) return;
  if (v instanceof StreamedList) for (const x of v.items) drain(x);
  else if (v instanceof Shared) drain(v.value);
  else if (v instanceof PyTuple) v.items.forEach(drain);
  else if (Array.isArray(v)) (v as readonly PyValue[]).forEach(drain);
  else if (v instanceof Map) for (const x of v.values()) drain(x);
  else Object.values(v).forEach(drain);
}

/**
 * Trace entries per device for a size target: two small samples give bytes per entry and the
 * fixed part (segments, settings), which depend on the options (stack depth, devices, format).
 */
function eventsFor(options: WriteOptions): number | undefined {
  if (options.events !== undefined || options.targetBytes === undefined) return undefined;
  const target = options.targetBytes;
  const guess = resolveOptions(options).events;
  const n1 = Math.min(20000, Math.max(500, Math.round(guess / 4)));
  const n2 = 2 * n1;
  const size = (events: number) =>
    writeSnapshot({ ...options, targetBytes: undefined, events }, () => {}).bytesWritten;
  const s1 = size(n1);
  const s2 = size(n2);
  const perEvent = (s2 - s1) / (n2 - n1);
  return Math.max(1, Math.round(n1 + (target - s1) / perEvent));
}
