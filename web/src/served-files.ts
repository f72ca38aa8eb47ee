import { embeddedReport, embeddedSource } from './embedded-data.js';
import type { Source } from './worker/protocol.js';

/** A snapshot file `memlens view` serves (GET api/files), with where to fetch it. */
export interface ServedFile {
  name: string;
  /** "step 3 · rank 1" when the path follows <save_path>/step<N>/torch_memory_rank<R>_pid<P>.pickle. */
  label: string;
  size: number;
  url: string;
  /** The ids of its data elements, when the page carries it (a `memlens report` page): read, never fetched. */
  embedded?: string[];
}

/** How the worker reads a listed file. */
export function sourceOf(f: ServedFile): Source {
  return f.embedded !== undefined
    ? embeddedSource({ ...f, embedded: f.embedded })
    : { url: f.url, name: f.name };
}

/** The server's file list (or a report page's own); none when the app was opened from disk or a plain static host. */
export async function servedFiles(): Promise<ServedFile[]> {
  const report = embeddedReport();
  if (report !== null) return report.files;
  if (location.protocol !== 'http:' && location.protocol !== 'https:') return [];
  try {
    const res = await fetch('api/files');
    if (!res.ok) return [];
    const body = (await res.json()) as { files: ServedFile[] };
    return body.files.map((f) => ({ ...f, url: new URL(f.url, location.href).href }));
  } catch {
    return [];
  }
}
