/** Messages between the engine worker and its inflater (inflate-worker.ts). */
export type InflaterRequest = { file: File } | { more: number };

/** A part carries how many of the file's (compressed) bytes had been read when it was sent. */
export type InflaterReply = { part: Uint8Array; read: number } | { done: true } | { error: string };
