/** Messages between the engine worker and its inflater (inflate-worker.ts). */
export type InflaterRequest = { file: File } | { more: number };

export type InflaterReply = { part: Uint8Array } | { done: true } | { error: string };
