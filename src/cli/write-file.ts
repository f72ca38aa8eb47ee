import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { SnapshotError } from '../engine/errors.js';

/** Writes to a temporary name, then renames: a failed run never leaves a half-written file. */
export function writeFileAtomically(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.memlens-${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    const code = (e as { code?: string }).code ?? (e as Error).message;
    throw new SnapshotError(`cannot write ${path} (${code})`);
  }
}
