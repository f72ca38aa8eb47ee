/** Exit code for bad input (unreadable, not a snapshot, corrupt). */
export const EXIT_BAD_INPUT = 2;

export function reportError(file: string, e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  process.stderr.write(`memlens: ${file}: ${message.split('\n')[0]}\n`);
}
