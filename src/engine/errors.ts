/**
 * The one error type the engine throws for bad input. Its message is a single line meant for the
 * user ("what is wrong"); the CLI and the web app prefix the file name. Anything else thrown from
 * the engine is a bug in memlens, not in the user's file.
 */
export class SnapshotError extends Error {
  /** Absolute byte offset in the (decompressed) input where decoding failed, when known. */
  readonly offset: number | undefined;

  constructor(message: string, offset?: number) {
    super(offset === undefined ? message : `${message} (at byte ${offset})`);
    this.name = 'SnapshotError';
    this.offset = offset;
  }
}

export function isSnapshotError(e: unknown): e is SnapshotError {
  return e instanceof SnapshotError;
}
