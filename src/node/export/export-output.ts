import { readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { SnapshotError } from '../../engine/base/index.js';

/**
 * Refuses an output that would destroy an input: one that is an input, holds one, or lies inside
 * an input directory (compared as real paths, so links and `./` spellings do not hide it). The
 * output is replaced by a rename at the end, so any of these would delete the snapshots read.
 */
export function checkOutputApart(output: string, inputs: readonly string[]): void {
  const out = realPathOf(output);
  for (const input of inputs) {
    const real = realPathOf(input);
    if (within(out, real) || within(real, out)) {
      const how = out === real ? 'is' : within(real, out) ? 'holds' : 'lies inside';
      throw new SnapshotError(`${output}: the output ${how} the input ${input}; choose another -o`);
    }
  }
}

/**
 * Whether `dir` may be written: missing or empty, or (with `force`) a previous export, told by
 * `isExport`. --force replaces only that, never a folder of other files.
 */
export function checkReplaceable(dir: string, force: boolean, isExport: (dir: string) => boolean): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new SnapshotError(`${dir}: cannot use as the output directory (${code})`);
  }
  if (entries.length === 0) return;
  if (!force) throw new SnapshotError(`${dir} is not empty (use --force to replace it)`);
  if (!isExport(dir))
    throw new SnapshotError(
      `${dir} is not empty and not a memlens export; --force replaces only a previous export (choose another -o)`,
    );
}

/** The real path of `p`, or for a path not there yet, its nearest existing parent's plus the rest. */
function realPathOf(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(realPathOf(parent), path.basename(abs));
  }
}

/** Whether `inner` is `outer` or below it. */
function within(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (rel.split(path.sep)[0] !== '..' && !path.isAbsolute(rel));
}
