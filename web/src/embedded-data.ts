import type { ReportManifest } from '../../src/wire/report-manifest.js';
import type { ServedCycle } from '../../src/wire/served-cycle.js';
import { BASE64_TYPE, base64Decoder } from './base64-stream.js';
import type { ServedFile } from './served-files.js';
import type { RunData } from './views/run/run-data.js';

/**
 * A report written by `memlens report` carries its snapshots inside the page: a JSON manifest
 * (`<script id="memlens-report" type="application/json">`) and, per snapshot, its bytes gzipped
 * and base64-encoded in `<script type="application/octet-stream">` elements. The page reads them
 * as the files `memlens view` would serve: File objects of the gzipped bytes (embeddedFile), which
 * the worker ungzips as it reads, so nothing is fetched at all.
 * The manifest's shape: src/wire/report-manifest.ts.
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
    file: embeddedFile(f.name, f.data),
  }));
  cached = { manifest, files };
  return cached;
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
      const gzipped = new Blob(c.data.map(textOf)).stream().pipeThrough(base64Decoder());
      return new Response(
        gzipped.pipeThrough(new DecompressionStream('gzip')),
      ).json() as Promise<ServedCycle>;
    }),
  );
}

/**
 * The size of the snapshot file an embedded File holds gzipped (what the worker reads once it is
 * ungzipped, and what a dropped file of it says), or null for any other file.
 */
export function embeddedSize(file: File): number | null {
  return embeddedReport()?.files.find((f) => f.file === file)?.size ?? null;
}

/**
 * A snapshot's data elements as one File of its gzipped bytes, the elements then dropped from the
 * page (the File holds the bytes, in the browser's blob store). The browser's own base64 decoder
 * (Uint8Array.fromBase64) reads 73 MiB of text in ~0.2 s; a File of the text itself cost 1.3 s on
 * this thread to encode the strings, and the worker then had the text to read and decode too.
 * Where the browser has no such decoder, the File holds the text and the worker decodes it.
 */
function embeddedFile(name: string, ids: string[]): File {
  const fromBase64 = (Uint8Array as { fromBase64?: (text: string) => Uint8Array<ArrayBuffer> }).fromBase64;
  const asText = () => new File(ids.map(textOf), name, { type: BASE64_TYPE });
  if (fromBase64 === undefined) return asText();
  let parts: Uint8Array<ArrayBuffer>[];
  try {
    parts = ids.map((id) => fromBase64(textOf(id)));
  } catch {
    // Text that is not base64: the worker's decoder says where, as the load's error.
    return asText();
  }
  for (const id of ids) document.getElementById(id)?.remove();
  return new File(parts, name, { type: 'application/gzip' });
}

/** A data element's base64 text (the Blob made of it holds the text, off the JavaScript heap). */
function textOf(id: string): string {
  return document.getElementById(id)?.textContent ?? '';
}

/** The embedded run as the Run page takes it: each snapshot opens its embedded file (or says why it is not there). */
export function embeddedRun(): RunData | null {
  const report = embeddedReport();
  const run = report?.manifest.run;
  if (report == null || run == null || run.report === null) return null;
  const sources = run.names.map((name) => {
    const f = report.files.find((x) => x.name === name);
    return { file: f?.file ?? new File([], name), name };
  });
  return { report: run.report, sources, watching: false };
}
