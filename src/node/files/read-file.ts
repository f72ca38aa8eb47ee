import { type FileHandle, open, stat } from 'node:fs/promises';
import { SnapshotError } from '../../engine/base/index.js';

const CHUNK = 4 * 1024 * 1024;

/** Checks the path is a readable regular file; fs error codes become one-line messages. */
export async function fileSize(path: string): Promise<number> {
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw new SnapshotError('is a directory, expected a snapshot file');
    if (!st.isFile()) throw new SnapshotError('is not a regular file');
    return st.size;
  } catch (e) {
    throw asInputError(e);
  }
}

/**
 * Streams a file in 4 MiB chunks straight from its descriptor (no 2 GiB readFile limit). The
 * next chunk is read (on libuv's thread pool) while the caller works on this one. Three buffers
 * take turns, so a big file costs no fresh memory per chunk (each one was a page-faulted
 * allocation and a garbage collection for its external memory): a chunk stays intact until the
 * caller asks for the one after next, which is all loadSnapshot's sinks rely on.
 */
export async function* readChunks(path: string, chunkBytes = CHUNK): AsyncGenerator<Uint8Array> {
  const handle = await openInput(path);
  try {
    yield* handleChunks(handle, chunkBytes);
  } finally {
    await handle.close();
  }
}

/** Opens a file for reading; fs error codes become one-line messages. */
export async function openInput(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (e) {
    throw asInputError(e);
  }
}

/**
 * readChunks over a descriptor the caller opened (and closes), from its first byte to its end:
 * a caller that must know which file it read (its inode) asks the descriptor, not the path.
 */
export async function* handleChunks(handle: FileHandle, chunkBytes = CHUNK): AsyncGenerator<Uint8Array> {
  // Not zeroed first: every read overwrites what it returns.
  const ring = [0, 1, 2].map(() => Buffer.allocUnsafe(chunkBytes));
  let turn = 0;
  let position = 0;
  const next = (): Promise<Uint8Array | null> => {
    const buf = ring[turn++ % ring.length]!;
    const read = handle.read(buf, 0, chunkBytes, position).then(({ bytesRead }) => {
      position += bytesRead;
      return bytesRead === 0 ? null : new Uint8Array(buf.buffer, buf.byteOffset, bytesRead);
    });
    // Awaited below; this only keeps a read abandoned by an early return from being unhandled.
    read.catch(() => {});
    return read;
  };
  let pending = next();
  try {
    for (let chunk = await pending; chunk !== null; chunk = await pending) {
      pending = next();
      yield chunk;
    }
  } catch (e) {
    throw asInputError(e);
  } finally {
    await pending.catch(() => null);
  }
}

const FS_MESSAGES: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory, expected a snapshot file',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'file name too long',
  EIO: 'I/O error while reading',
};

function asInputError(e: unknown): unknown {
  if (e instanceof SnapshotError) return e;
  const code = (e as { code?: string }).code;
  if (code !== undefined) return new SnapshotError(FS_MESSAGES[code] ?? `cannot read (${code})`);
  return e;
}
