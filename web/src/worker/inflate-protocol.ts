/** Messages between the engine worker and its inflater (inflate-worker.ts). */
/**
 * What the inflater reads: a gzipped File, a report page's base64 text of one (decoded there), or
 * a served file's URL (fetched there and passed on as it is).
 */
export type InflaterInput = { file: File } | { text: MessagePort } | { url: string };

export type InflaterRequest = InflaterInput | { more: number };

/** total: a fetched file's Content-Length (null: none), before its first part. */
export type InflaterReply =
  | { part: Uint8Array }
  | { done: true }
  | { error: string }
  | { total: number | null };
