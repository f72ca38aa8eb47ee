import type { ReportManifest } from '../../src/wire/report-manifest.js';
import type { ServedCycle } from '../../src/wire/served-cycle.js';
import { base64Decoder } from './base64-stream.js';
import type { ServedFile } from './served-files.js';
import { servePort } from './text-port.js';
import type { RunData } from './views/run/run-data.js';
import type { Source } from './worker/protocol.js';

/**
 * A report written by `memlens report` carries its snapshots inside the page: a JSON manifest
 * (`<script id="memlens-report" type="application/json">`) ahead of the app's script and, after
 * it, each snapshot's bytes gzipped and base64-encoded in parts, each in a
 * `<script type="application/octet-stream">` element. The app starts before the browser has
 * parsed the parts: the worker is handed each part's text as soon as the parser has read it
 * (embeddedText), and decodes, ungzips and decodes the snapshot while the page is still being
 * read; nothing is fetched at all. The manifest's shape: src/wire/report-manifest.ts.
 */
let cached: { manifest: ReportManifest; files: ServedFile[] } | null | undefined;

/** The report this page carries, or null for the app served by `memlens view` or opened from dist/web. */
export function embeddedReport(): { manifest: ReportManifest; files: ServedFile[] } | null {
  if (cached !== undefined) return cached;
  const el = document.getElementById('memlens-report');
  if (el === null) return (cached = null);
  const manifest = JSON.parse(el.textContent ?? '') as ReportManifest;
  const files = manifest.files.map((f) => ({
    name: f.name,
    label: f.label,
    size: f.size,
    url: '',
    embedded: f.data,
  }));
  cached = { manifest, files };
  return cached;
}

/** How the worker reads an embedded snapshot: the page sends its parts' text (client.ts). */
export function embeddedSource(f: { name: string; size: number; embedded: string[] }): Source {
  return { embedded: f.embedded, name: f.name, size: f.size };
}

/** Why a snapshot of the embedded run is not in the page, or null when it is (or no report). */
export function omittedReason(name: string): string | null {
  const o = embeddedReport()?.manifest.omitted.find((x) => x.name === name);
  return o === undefined ? null : `not in this report: ${o.reason}`;
}

/**
 * The embedded run's recorded cycles, as `memlens view DIR` serves them (GET api/cycles): each
 * one's gzipped JSON ungzipped by the browser (DecompressionStream); [] when the page has none.
 */
export async function embeddedCycles(): Promise<ServedCycle[]> {
  const cycles = embeddedReport()?.manifest.cycles ?? [];
  return Promise.all(
    cycles.map((c) => {
      const gzipped = embeddedText(c.data).pipeThrough(base64Decoder());
      return new Response(
        gzipped.pipeThrough(new DecompressionStream('gzip')),
      ).json() as Promise<ServedCycle>;
    }),
  );
}

/** The base64 text of the data elements `ids`, as a port the worker reads it from (text-port.ts). */
export function embeddedPort(ids: string[]): MessagePort {
  return servePort(partsOf(ids));
}

/** The same text, read here (a recorded cycle's few KiB). */
function embeddedText(ids: string[]): ReadableStream<string> {
  const next = partsOf(ids);
  return new ReadableStream<string>({
    async pull(controller) {
      const part = await next();
      if (part === undefined) controller.close();
      else controller.enqueue(part);
    },
  });
}

/**
 * The data elements' text, part by part in order, each as soon as the parser has read all of it
 * (undefined after the last). The elements stay in the page, so the snapshot can be read again
 * (opened anew, compared): the text lives in the document, off the JavaScript heap.
 */
function partsOf(ids: string[]): () => Promise<string | undefined> {
  let next = 0;
  return async () => (next < ids.length ? ((await parsed(ids[next++]!)).textContent ?? '') : undefined);
}

/** Checks run on every change to the page while it is parsed: each settles its promise and says so. */
const waiting = new Set<() => boolean>();
let observer: MutationObserver | undefined;

/**
 * The element `id` once the parser has read it whole: something follows it (the parser is past
 * its end tag), or the page has been read to its end.
 */
function parsed(id: string): Promise<Element> {
  return new Promise((resolve, reject) => {
    const settled = (): boolean => {
      const el = document.getElementById(id);
      const read = document.readyState !== 'loading';
      if (el !== null && (el.nextSibling !== null || read)) resolve(el);
      else if (read) reject(new Error(`this report lacks its data element ${id}`));
      else return false;
      return true;
    };
    if (settled()) return;
    waiting.add(settled);
    watchParse();
  });
}

function watchParse(): void {
  if (observer !== undefined) return;
  const check = () => {
    for (const settled of waiting) if (settled()) waiting.delete(settled);
    if (document.readyState !== 'loading') {
      observer?.disconnect();
      document.removeEventListener('readystatechange', check);
    }
  };
  observer = new MutationObserver(check);
  observer.observe(document, { childList: true, subtree: true });
  document.addEventListener('readystatechange', check);
}

/** The embedded run as the Run page takes it: each snapshot opens its embedded file (or says why it is not there). */
export function embeddedRun(): RunData | null {
  const report = embeddedReport();
  const run = report?.manifest.run;
  if (report == null || run == null || run.report === null) return null;
  const sources = run.names.map((name): Source => {
    const f = report.files.find((x) => x.name === name);
    return f?.embedded !== undefined
      ? embeddedSource({ ...f, embedded: f.embedded })
      : { file: new File([], name), name };
  });
  return { report: run.report, sources, watching: false };
}
