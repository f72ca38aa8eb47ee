/** Messages between the engine worker and its inflater (inflate-worker.ts). */
/**
 * What the inflater reads: a gzipped File, a report page's base64 text of one (decoded there; the
 * same text again from `again`, read only for a file of several gzip members), or a served file's
 * URL (fetched there, inflated when it is gzip, else passed on as it is).
 */
export type InflaterInput = { file: File } | { text: MessagePort; again: MessagePort } | { url: string };

export type InflaterRequest = InflaterInput | { more: number };

/**
 * read: for gzipped input, how many of its (compressed) bytes had been read when the part was sent;
 * total: a fetched file's Content-Length (null: none), before its first part, and whether it is
 * gzip (its parts are then inflated).
 */
export type InflaterReply =
  | { part: Uint8Array; read?: number }
  | { done: true }
  | { error: string }
  | { total: number | null; gzip: boolean };
