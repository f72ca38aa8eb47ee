import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generateRun, type RunFile, type RunOptions } from '../../src/engine/synth/run.js';

/** Writes a generated training run's files under `root` in their layout's directories. */
export function writeGeneratedRun(root: string, options: RunOptions): RunFile[] {
  const files = generateRun(options);
  for (const f of files) {
    const p = join(root, ...f.path.split('/'));
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, f.bytes);
  }
  return files;
}
