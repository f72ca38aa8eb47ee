/** Exit code for bad input (unreadable, not a snapshot, corrupt). */
export const EXIT_BAD_INPUT = 2;

/** The output could not be written (a full disk, /dev/full); a reader that left (EPIPE) is success. */
export const EXIT_WRITE_FAILED = 1;

export function reportError(file: string, e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  process.stderr.write(`memlens: ${file}: ${message.split('\n')[0]}\n`);
}
