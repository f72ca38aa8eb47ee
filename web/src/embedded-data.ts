import type { ReportManifest } from '../../src/wire/report-manifest.js';
import type { ServedCycle } from '../../src/wire/served-cycle.js';
import type { ServedFile } from './served-files.js';
import type { RunData } from './views/run/run-data.js';

/**
 * A report written by `memlens report` carries its snapshots inside the page: a JSON manifest
 * (`<script id="memlens-report" type="application/json">`) and, per snapshot, its bytes gzipped
 * and base64-encoded in `<script type="application/octet-stream">` elements. The page reads them
 * as the files `memlens view` would serve (as File objects: the worker reads them as it reads a
 * dropped file, and DecompressionStream ungzips them), so nothing is fetched at all.
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
    file: new File(f.data.map(bytesOf), f.name),
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
      const gzipped = new Blob(c.data.map(bytesOf)).stream();
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

function bytesOf(id: string): Uint8Array<ArrayBuffer> {
  const text = document.getElementById(id)?.textContent ?? '';
  const fromBase64 = (Uint8Array as { fromBase64?: (s: string) => Uint8Array<ArrayBuffer> }).fromBase64;
  if (fromBase64 !== undefined) return fromBase64(text.trim());
  // Browsers before Uint8Array.fromBase64 (e.g. an older VS Code or Safari).
  const binary = atob(text.trim());
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
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
