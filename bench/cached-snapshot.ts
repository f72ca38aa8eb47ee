import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo-root.js';

export const ROOT = repoRoot(import.meta.url);
/** Where `npm run build:tools` puts the compiled bench and scripts. */
export const TOOLS = join(ROOT, 'dist-tools');
const CACHE = join(ROOT, 'bench', 'cache');
/** Bump when the generator's output changes, so cached files are remade. */
const GENERATOR_VERSION = 1;

/** The synthetic snapshot of `size` (e.g. "1GB") in bench/cache, generated on first use. */
export function cachedSnapshot(size: string): string {
  return cachedGenerated(`synth-${size}-seed1`, ['--size', size]);
}

/**
 * A training loop whose reference cycles Python's collector frees every other step: seed 3 picks
 * a small model (about 980 entries a step) and shared stacks fit more steps in a file, so 1 GB
 * holds 13,000 steps and 6,669 collector bursts of 8 tensors (4 of them older than a step).
 */
export function cachedGcSnapshot(size: string): string {
  return cachedGenerated(`synth-${size}-gc2-seed3`, [
    '--size',
    size,
    '--seed',
    '3',
    '--share-stacks',
    '--cycles',
    '8MB,4MB,2MB,1MB',
    '--gc-every',
    '2',
  ]);
}

function cachedGenerated(name: string, args: string[]): string {
  const file = join(CACHE, `${name}-v${GENERATOR_VERSION}.pickle`);
  if (!existsSync(file)) {
    mkdirSync(CACHE, { recursive: true });
    process.stderr.write(`generating ${file} ...\n`);
    execFileSync(
      process.execPath,
      [join(TOOLS, 'scripts', 'generate.js'), '--out', file, ...args, '--quiet'],
      { stdio: 'inherit' },
    );
  }
  return file;
}
