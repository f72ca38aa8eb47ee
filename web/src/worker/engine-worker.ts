import { jsonInProducerWords } from '../../../src/engine/analyses/producer/index.js';
import {
  deviceStreams,
  type SnapshotSummary,
  summarize,
} from '../../../src/engine/analyses/summary/index.js';
import { asSnapshotError, SnapshotError } from '../../../src/engine/base/index.js';
import { allocationAt, allocationDetails, hasHistory, offsetOf } from '../../../src/engine/derived/index.js';
import { loadSnapshot } from '../../../src/engine/load/index.js';
import { type DeviceModel, deviceName, type Snapshot } from '../../../src/engine/model/index.js';
import {
  pieceAt,
  poolStateAfter,
  type SegmentPieces,
  segmentPieces,
  segmentTimelineLod,
} from '../../../src/engine/views/pools/index.js';
import {
  axisExtent,
  convertWindow,
  hasTime,
  hoverFacts,
  oomMarks,
  stepMarkers,
  timelineLod,
  timelineOutline,
  traceStartUs,
} from '../../../src/engine/views/timeline/index.js';
import { base64Decoder } from '../base64-stream.js';
import { portText } from '../text-port.js';
import { envelopeTone, paintLayer, paintOutline } from '../timeline/paint-layer.js';
import type { TimelineStack } from '../url-state.js';
import { analysisHandlers } from './analysis-handlers.js';
import {
  type FetchedHead,
  gzipBytesRead,
  inflatedSizeHint,
  inflatedStream,
  isGzip,
} from './inflated-stream.js';
import { oncePer } from './once-per.js';
import { lastSnapshot } from './other-snapshot.js';
import { poolTimelines, traceTop } from './pool-timeline.js';
import type { EntryInfo, Loaded, Queries, QueryName, Request, Response, Source } from './protocol.js';
import { runHandlers } from './run-handlers.js';
import { tableHandlers } from './table-handlers.js';
import { searchMatches, streamViews } from './timeline-inputs.js';
import { whatIfHandlers } from './what-if-handlers.js';

/**
 * The engine, unchanged, in a Web Worker: it holds the Snapshot model and answers the page's
 * queries, so decoding and every walk over the columns stay off the page's thread.
 */
interface WorkerScope {
  postMessage(message: Response, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent<Request>) => void) | null;
}
const scope = self as unknown as WorkerScope;

let snapshot: Snapshot | undefined;

type Handler<K extends QueryName> = (
  args: Queries[K]['args'],
  id: number,
) => Promise<Queries[K]['result']> | Queries[K]['result'];

const viewOf = streamViews(current, deviceOf);
const piecesOfModel = oncePer((d: DeviceModel) => segmentPieces(current(), d));
/** The segment timeline's pieces of a device, built on first use. */
const piecesOf = (device: number): SegmentPieces => piecesOfModel(deviceOf(device));
const matchesOf = searchMatches(current, deviceOf);
const pools = poolTimelines(current, deviceOf, viewOf, piecesOf);
/** A file loaded for a query, its progress reported on that query. */
const loadFor = (source: Source, id: number) =>
  load(source, (bytes, total) => scope.postMessage({ id, progress: { bytes, total } }));
/** The compared file (B), decoded once for the diff and the Run page's curves. */
const otherOf = lastSnapshot(loadFor);

const analyses = analysisHandlers(current, deviceOf, (id, partial) =>
  scope.postMessage({ id, partial: inWords('diagnosis', partial) }),
);

const handlers: { [K in QueryName]: Handler<K> } = {
  load: async ({ source, diagnose }, id) => {
    snapshot = undefined;
    snapshot = await load(source, (bytes, total) => scope.postMessage({ id, progress: { bytes, total } }));
    // After this answer is posted: the page's own query for it joins the run under way.
    if (diagnose !== undefined)
      setTimeout(() => Promise.resolve(analyses.diagnosis(diagnose, null)).catch(() => {}));
    return describe(snapshot);
  },
  summary: () => summaryOf(current()),
  timeline: ({ device, request: asked, stream, search, paint, stack, zoom, outline }, id) => {
    // The segments stack is the whole device's; the pools stack keeps the stream's groups only.
    const view = stack === 'segments' ? deviceOf(device) : viewOf(device, stream);
    const reservedOnly = stack === 'segments' || stack === 'pools';
    // A horizontal zoom keeps the y axis of the whole trace.
    const request = zoom === 'horizontal' ? { ...asked, yTop: traceTop(view, reservedOnly) } : asked;
    // The shape first, from the running totals alone; the page draws it while the rest is stacked
    // (the allocations stack: its outline is the stacked answer's, on the same scale).
    if (outline && paint && stack !== 'segments' && stack !== 'pools') {
      const shape = timelineOutline(view, request);
      const partial = { ...shape, bitmap: paintOutline(shape, paint) };
      scope.postMessage({ id, partial }, transferables(partial));
    }
    if (stack === 'pools') {
      const lod = pools.lod(device, request, stream, matchesOf(device, search ?? ''));
      return paint ? { ...lod, bitmap: paintLayer(lod, paint, envelopeTone, lod.envelopeTop) } : lod;
    }
    const lod =
      stack === 'segments'
        ? segmentTimelineLod(view, piecesOf(device), request)
        : timelineLod(view, request, matchesOf(device, search ?? ''));
    return paint ? { ...lod, bitmap: paintLayer(lod, paint) } : lod;
  },
  part: ({ device, entry, bytes, stream }) => pools.part(device, entry, bytes, stream),
  piece: ({ device, entry, bytes }) => {
    const p = piecesOf(device);
    const id = pieceAt(p, entry, bytes);
    return id < 0
      ? null
      : { address: p.address[id]!, size: p.size[id]!, start: p.start[id]!, end: p.end[id]! };
  },
  markers: ({ device, axis }) => stepMarkers(current(), deviceOf(device), axis),
  ooms: ({ device, axis }) => oomMarks(current(), deviceOf(device), axis),
  hover: ({ device, entry, alloc }) => hoverFacts(current(), deviceOf(device), entry, alloc),
  streams: ({ device }) => deviceStreams(current(), deviceOf(device)),
  axisWindow: ({ device, window, from, to }) => convertWindow(deviceOf(device), window, from, to),
  details: ({ device, alloc, entry, stream, stack }) => detailsOf(device, alloc, entry, stream, stack),
  select: ({ device, entry, alloc, stream, stack, pool, pick }) => {
    const d = deviceOf(device);
    const chosen = pick === null ? alloc : allocationAt(viewOf(device, stream), entry, pick.bytes);
    const id = chosen !== null && chosen >= 0 ? chosen : null;
    return {
      entry: entryInfo(current(), d, entry),
      alloc: id,
      // An allocation a link names may not exist in this file: no details, not a failed answer.
      details: id === null ? null : attempt(() => detailsOf(device, id, entry, stream, stack)),
      pool: pool ? poolStateAfter(current(), d, entry) : null,
    };
  },
  entry: ({ device, entry }) => entryInfo(current(), deviceOf(device), entry),
  ...tableHandlers(current, deviceOf),
  ...analyses,
  ...whatIfHandlers(current, deviceOf, otherOf),
  ...runHandlers(current, deviceOf, otherOf, loadFor),
};

/**
 * The answers that hold sentences (verdicts, notes, explanations, event words): said in the open
 * file's producer's words, as the CLI says them. The others are data (figures, frames, tables,
 * timelines; runCell and curves speak of other files) and go as they are.
 */
const SENTENCES = new Set<QueryName | 'error'>([
  'error',
  'summary',
  'markers',
  'ooms',
  'hover',
  'details',
  'select',
  'entry',
  'leaks',
  'gc',
  'frag',
  'oom',
  'categories',
  'diagnosis',
  'whatIf',
  'sweepRun',
  'compare',
]);

function inWords<T>(query: QueryName | 'error', answer: T): T {
  return snapshot !== undefined && SENTENCES.has(query)
    ? jsonInProducerWords(answer, snapshot.producer)
    : answer;
}

scope.onmessage = async (e) => {
  const { id, query, args } = e.data;
  try {
    const result = inWords(query, await (handlers[query] as Handler<QueryName>)(args, id));
    scope.postMessage({ id, ok: true, result }, transferables(result));
  } catch (err) {
    scope.postMessage({ id, ok: false, error: inWords('error', asSnapshotError(err).message) });
  }
};

async function load(
  source: Source,
  progress: (bytes: number, total: number | null) => void,
): Promise<Snapshot> {
  const { stream, total, inflated, sizeHint } = await open(source);
  let last = Number.NEGATIVE_INFINITY;
  let sent = -1;
  // A gzip file inflated beside the engine: its progress is of the file's bytes behind the parts taken.
  let fileRead = 0;
  const parts = inflated
    ? tap(chunks(stream), (part) => {
        fileRead = gzipBytesRead(part) ?? fileRead;
      })
    : chunks(stream);
  return loadSnapshot(parts, {
    sizeHint: (inflated ? sizeHint : total) ?? undefined,
    onProgress: (decoded) => {
      const bytes = Math.min(inflated ? fileRead : decoded, total ?? Number.POSITIVE_INFINITY);
      // Twenty messages a second are plenty for a progress bar, and one saying nothing new is none.
      const now = performance.now();
      if (bytes === sent || (now - last < 50 && bytes !== total)) return;
      last = now;
      sent = bytes;
      progress(bytes, total);
    },
  });
}

async function* tap<T>(items: AsyncIterable<T>, seen: (item: T) => void): AsyncGenerator<T> {
  for await (const item of items) {
    seen(item);
    yield item;
  }
}

async function open(source: Source): Promise<{
  stream: ReadableStream<Uint8Array>;
  /** What progress counts to: the bytes of the file (or response) read. */
  total: number | null;
  /** A gzip file inflated by its own worker: progress is of the file's bytes behind each part. */
  inflated?: boolean;
  /** The decoded size, roughly, where it is not `total` (sizes the decoder's columns). */
  sizeHint?: number | null;
}> {
  if ('embedded' in source) throw new SnapshotError('an embedded snapshot reaches the worker as its text');
  if ('text' in source) {
    // A report's embedded snapshot, gzipped: decoded and inflated beside the engine as the page is
    // read, or here (load.ts inflates it) where no worker can be started. `size` is the snapshot
    // file's own, which the inflated bytes count to.
    const { text, again, size } = source;
    return {
      stream: inflatedStream({ text, again }) ?? portText(text).pipeThrough(base64Decoder()),
      total: size,
    };
  }
  if ('file' in source) {
    const { file } = source;
    // A gzipped file (a dropped .gz) inflates on a thread of its own.
    const inflated = (await isGzip(file)) ? inflatedStream({ file }) : null;
    if (inflated !== null)
      return { stream: inflated, total: file.size, inflated: true, sizeHint: await inflatedSizeHint(file) };
    return { stream: file.stream() as ReadableStream<Uint8Array>, total: file.size };
  }
  // Fetched by a thread of its own, which drains the response while this one decodes (and
  // inflates it, when it is gzip).
  let headed: (head: FetchedHead) => void = () => {};
  const known = new Promise<FetchedHead>((resolve) => {
    headed = resolve;
  });
  const fetched = inflatedStream({ url: source.url }, headed);
  if (fetched !== null) {
    const { total, gzip } = await known;
    return { stream: fetched, total, inflated: gzip };
  }
  const res = await fetch(source.url);
  if (!res.ok || res.body === null) throw new SnapshotError(`cannot read (HTTP ${res.status})`);
  const length = Number(res.headers.get('content-length'));
  return { stream: res.body, total: Number.isFinite(length) && length > 0 ? length : null };
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
  } finally {
    // A file refused before its end: its source stops (a fetch, the inflater's worker).
    reader.cancel().catch(() => {});
  }
}

/** The Overview's summary, computed once per snapshot. */
const summaryOf: (s: Snapshot) => SnapshotSummary = oncePer(summarize);

function describe(s: Snapshot): Loaded {
  return {
    devices: s.devices.map((d) => ({
      device: d.device,
      label: deviceName(s.producer, d.device),
      entries: d.trace.length,
      hasTime: hasTime(d),
      hasHistory: hasHistory(d),
      startUs: traceStartUs(d),
      extent: { entry: axisExtent(d, 'entry'), time: axisExtent(d, 'time') },
    })),
    producer: s.producer,
    entries: s.traceColumns.length,
    scannedEntries: s.scannedEntries,
  };
}

/** An allocation's details, with its offset in the stack the timeline draws (pools: in its group's envelope). */
function detailsOf(
  device: number,
  alloc: number,
  entry: number,
  stream?: number | null,
  stack?: TimelineStack,
) {
  return {
    ...allocationDetails(current(), deviceOf(device), alloc),
    offset:
      stack === 'pools'
        ? pools.offset(device, entry, alloc, stream)
        : offsetOf(viewOf(device, stream), entry, alloc),
  };
}

function attempt<T>(f: () => T): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}

function current(): Snapshot {
  if (snapshot === undefined) throw new SnapshotError('no snapshot loaded');
  return snapshot;
}

function deviceOf(device: number): DeviceModel {
  const d = current().devices.find((x) => x.device === device);
  if (d === undefined) throw new SnapshotError(`has no device ${device}`);
  return d;
}

function entryInfo(s: Snapshot, d: DeviceModel, k: number): EntryInfo | null {
  if (k < 0 || k >= d.trace.length) return null;
  const t = d.trace;
  const num = (v: number): number | null => (Number.isNaN(v) ? null : v);
  return {
    entry: k,
    action: s.traceColumns.actionNames[t.action[k]!] ?? 'missing',
    address: num(t.addr[k]!),
    size: num(t.size[k]!),
    stream: s.traceColumns.streams[t.stream[k]!] ?? 0,
    time_us: num(t.timeUs[k]!),
    since_start_us: Number.isNaN(t.timeUs[k]!) ? null : t.timeUs[k]! - (traceStartUs(d) ?? t.timeUs[k]!),
    allocated_bytes: d.totals.allocated[k]!,
    active_bytes: d.totals.active[k]!,
    reserved_bytes: d.totals.reserved[k]!,
    alloc: d.allocations.ofEntry[k]!,
    device_free_bytes: num(t.deviceFree?.[k] ?? Number.NaN),
  };
}

/** The typed arrays and bitmap of a timeline answer move to the page instead of being copied. */
function transferables(result: unknown): Transferable[] {
  if (typeof result !== 'object' || result === null) return [];
  // A buffer listed twice (two views of one) makes postMessage throw.
  const found = Object.values(result).flatMap((v): Transferable[] =>
    ArrayBuffer.isView(v) ? [v.buffer as ArrayBuffer] : v instanceof ImageBitmap ? [v] : [],
  );
  return [...new Set(found)];
}
