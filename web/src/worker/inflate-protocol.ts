/** Messages between the engine worker and its inflater (inflate-worker.ts). */
/** What the inflater reads: a gzipped File, or a report page's base64 text of one (decoded there). */
export type InflaterInput = { file: File } | { text: MessagePort };

export type InflaterRequest = InflaterInput | { more: number };

export type InflaterReply = { part: Uint8Array } | { done: true } | { error: string };
