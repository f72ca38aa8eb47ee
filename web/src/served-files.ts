/** A snapshot file `memlens view` serves (GET api/files), with where to fetch it. */
export interface ServedFile {
  name: string;
  /** "step 3 · rank 1" when the path follows <save_path>/step<N>/torch_memory_rank<R>_pid<P>.pickle. */
  label: string;
  size: number;
  url: string;
}

/** The server's file list; none when the app was opened from disk or a plain static host. */
export async function servedFiles(): Promise<ServedFile[]> {
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
