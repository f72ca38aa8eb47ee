import { createHash } from 'node:crypto';
import type { ReportManifest } from '../../wire/report-manifest.js';
import type { AppTemplate } from './report-template.js';

/** One snapshot carried by the page: its bytes gzipped (as read, when the file already was). */
export interface EmbeddedSnapshot {
  name: string;
  label: string;
  /** The file's own size. */
  size: number;
  gzipped: Uint8Array;
}

/** One recorded cycle of the run (what `memlens view DIR` serves at api/cycles), its JSON gzipped. */
export interface EmbeddedCycle {
  name: string;
  /** Its JSON's bytes. */
  size: number;
  gzipped: Uint8Array;
}

/** What a report carries: the manifest (less the lists of data elements) and the gzipped bytes. */
export interface ReportContents {
  manifest: Omit<ReportManifest, 'files' | 'cycles'>;
  snapshots: EmbeddedSnapshot[];
  cycles: EmbeddedCycle[];
}

/**
 * The report as chunks of one HTML document: the app's page up to </body>, the manifest as JSON,
 * the app's script, then each recorded cycle's and snapshot's gzipped bytes in base64, in parts,
 * each in its own inert <script type="application/octet-stream"> (the browser neither runs nor
 * fetches it). The script comes before the data so the app starts at once and hands each part to
 * its worker as the browser's parser reads it: parsing a large report's page took longer than
 * decoding its snapshot, and the two now overlap. Chunks, so a large snapshot's text is never
 * joined into one string with the rest.
 */
export function reportChunks(
  app: AppTemplate,
  title: string,
  { manifest, snapshots, cycles }: ReportContents,
  write: (chunk: Uint8Array) => void,
  partBytes = PART_BYTES,
): void {
  const text = (s: string) => write(Buffer.from(s, 'utf8'));
  const partsFor = (prefix: string, list: { gzipped: Uint8Array }[]) =>
    list.map((s, i) =>
      partsOf(s.gzipped, partBytes).map((bytes, k) => ({ id: `${prefix}-${i}-${k}`, bytes })),
    );
  const parts = partsFor('memlens-data', snapshots);
  const cycleParts = partsFor('memlens-cycle', cycles);
  const full: ReportManifest = {
    ...manifest,
    files: snapshots.map((s, i) => ({
      name: s.name,
      label: s.label,
      size: s.size,
      data: parts[i]!.map((p) => p.id),
    })),
    cycles: cycles.map((c, i) => ({ name: c.name, size: c.size, data: cycleParts[i]!.map((p) => p.id) })),
  };
  const head = app.before
    .replace(/<title>[^<]*<\/title>/, `<title>${escapeHtml(title)}</title>`)
    .replace(/<head>/i, `<head>\n    <meta http-equiv="Content-Security-Policy" content="${policy(app)}" />`);
  text(head);
  text(`<script id="memlens-report" type="application/json">${jsonInScript(full)}</script>\n`);
  text(app.script);
  // The cycles (a few KiB each) first: the app reads them all at its start.
  for (const part of [...cycleParts.flat(), ...parts.flat()]) {
    text(`<script id="${part.id}" type="application/octet-stream">`);
    write(base64(part.bytes));
    text('</script>\n');
  }
  text(app.after);
}

/**
 * The page may run its own script and nothing else, and may reach nothing: no fetch, no image,
 * font or frame from anywhere (the browser enforces what the tests check). The script is named by
 * its hash; its worker is a blob; 'wasm-unsafe-eval' lets the engine compile its entry scanner.
 */
function policy(app: AppTemplate): string {
  const body = app.script.slice(app.script.indexOf('>') + 1, app.script.lastIndexOf('</script>'));
  const hash = createHash('sha256').update(body, 'utf8').digest('base64');
  return [
    "default-src 'none'",
    `script-src 'sha256-${hash}' 'wasm-unsafe-eval'`,
    'worker-src blob: data:',
    "style-src 'unsafe-inline'",
    'img-src data: blob:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * Bytes per data element: a multiple of 3, so each part is whole base64, and its text (1 MiB) far
 * below the longest string a browser's JavaScript holds (V8: 2^29 - 24 characters), which one
 * element of a large snapshot would pass. Small, so the worker starts on the first part soon
 * after the parser reads it and is never far behind (a 1 GB trace gzips to ~70 parts).
 */
const PART_BYTES = 3 * 2 ** 18;

function partsOf(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out.length > 0 ? out : [bytes];
}

/** JSON whose text cannot end its <script> element or open a comment in it. */
function jsonInScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function base64(bytes: Uint8Array): Uint8Array {
  return Buffer.from(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
    'latin1',
  );
}
