import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { identityOf, type ServedFile } from './snapshot-files.js';

export type Opened = { handle: FileHandle; size: number } | { status: number; message: string };

/**
 * Opens a listed file for one request, and only if the path still leads to the file that was
 * listed: the path was resolved when listed, so a symbolic link now in its place is refused by
 * O_NOFOLLOW, and the descriptor's device and inode must be the listed ones (a file renamed over
 * it, a folder on the way swapped for a link to another). O_NONBLOCK: a FIFO put there must not
 * hang the open; it is then refused as not a regular file.
 */
export async function openServed(file: ServedFile): Promise<Opened> {
  let handle: FileHandle;
  try {
    handle = await open(
      file.path,
      constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0),
    );
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { status: 404, message: `${file.name}: no longer there` };
    if (code === 'ELOOP') return replaced(file);
    return { status: 403, message: `${file.name}: cannot be read (${code})` };
  }
  try {
    const st = await handle.stat({ bigint: true });
    if (st.isFile() && identityOf(st) === file.identity) return { handle, size: Number(st.size) };
  } catch {
    // Refused below, as a file that is not the listed one.
  }
  await handle.close();
  return replaced(file);
}

function replaced(file: ServedFile): Opened {
  return {
    status: 409,
    message: `${file.name}: replaced since memlens view listed it; not serving it (restart memlens view to list it again)`,
  };
}
