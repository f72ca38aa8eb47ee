import { closeSync, constants, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { SnapshotError } from '../../engine/base/index.js';
import { removeIfInterrupted } from './interrupt-cleanup.js';

/**
 * Writes to a temporary name, then renames: a failed or interrupted run (Ctrl+C, SIGTERM, SIGHUP,
 * a kill) never leaves a half-written file, under either name.
 */
export function writeFileAtomically(path: string, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  writeStreamAtomically(path, (write) => write(bytes));
}

/**
 * Same guarantee for output produced in chunks (a streamed pickle): `produce` hands each chunk to
 * `write`; if it throws, the temporary file is removed and its error goes on unchanged.
 */
export function writeStreamAtomically(
  path: string,
  produce: (write: (chunk: Uint8Array) => void) => void,
): void {
  const tmp = `${path}.memlens-${process.pid}.tmp`;
  // Before the file exists: an interrupt at any point after this leaves no temporary file.
  const release = removeIfInterrupted(tmp);
  let fd = -1;
  try {
    fd = openNotThroughLink(tmp);
    const out = fd;
    produce((chunk) => {
      for (let at = 0; at < chunk.length; ) at += writeSync(out, chunk, at);
    });
    closeSync(fd);
    fd = -1;
    renameSync(tmp, path);
  } catch (e) {
    if (fd >= 0) closeSync(fd);
    rmSync(tmp, { force: true });
    if (e instanceof SnapshotError) throw e;
    const code = (e as { code?: string }).code ?? (e as Error).message;
    throw new SnapshotError(`cannot write ${path} (${code})`);
  } finally {
    release();
  }
}

/**
 * The temporary file, never through a link: a link planted at its (predictable) name must not
 * make memlens write into the file it points at. Such a link is removed and the open tried again.
 * (A hard link is not guarded here: the kernel's protected_hardlinks refuses links to others'
 * files.)
 */
function openNotThroughLink(tmp: string): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);
  try {
    return openSync(tmp, flags, 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ELOOP') throw e;
    rmSync(tmp, { force: true });
    return openSync(tmp, flags, 0o644);
  }
}
