import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generateRun, type RunFile, type RunOptions } from '../../scripts/synth/run.js';

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

const MiB = 2 ** 20;

/** The run the Run page's tests and pictures show: an extra buffer, a growing site and an OOM. */
export const PLANTED_RUN: RunOptions = {
  ranks: 4,
  windows: 6,
  seed: 8,
  extraBuffer: { rank: 1, bytes: 512 * MiB, step: 3 },
  growth: { rank: 2, bytes: 16 * MiB },
  oom: { rank: 3, cause: 'exhaustion' },
};
