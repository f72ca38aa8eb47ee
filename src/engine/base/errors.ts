/**
 * The one error type the engine throws for bad input. Its message is a single line meant for the
 * user ("what is wrong"); the CLI and the web app prefix the file name. Anything else thrown from
 * the engine is a bug in memlens, not in the user's file.
 */
export class SnapshotError extends Error {
  /** Absolute byte offset in the (decompressed) input where decoding failed, when known. */
  readonly offset: number | undefined;

  constructor(message: string, offset?: number) {
    const line = oneLine(message);
    super(offset === undefined ? line : `${line} (at byte ${offset})`);
    this.name = 'SnapshotError';
    this.offset = offset;
  }
}

const MAX_MESSAGE = 300;

/** Messages quote bytes from the file; keep them on one printable line of bounded length. */
function oneLine(message: string): string {
  const flat = message.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE - 1)}…` : flat;
}

/**
 * Any failure while loading, as the one-line error the user sees (CLI and web app alike).
 * Anything but a SnapshotError is memlens failing on odd input: still one line.
 */
export function asSnapshotError(e: unknown): SnapshotError {
  if (e instanceof SnapshotError) return e;
  if (e instanceof RangeError)
    return new SnapshotError(`input too large or malformed for memlens (${e.message})`);
  const message = e instanceof Error ? e.message : String(e);
  return new SnapshotError(`memlens failed to read this file (internal error, please report): ${message}`);
}
