import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE = join(ROOT, 'bench', 'cache');
/** Bump when the generator's output changes, so cached files are remade. */
const GENERATOR_VERSION = 1;

/** The synthetic snapshot of `size` (e.g. "1GB") in bench/cache, generated on first use. */
export function cachedSnapshot(size: string): string {
  const file = join(CACHE, `synth-${size}-seed1-v${GENERATOR_VERSION}.pickle`);
  if (!existsSync(file)) {
    mkdirSync(CACHE, { recursive: true });
    process.stderr.write(`generating ${file} ...\n`);
    execFileSync(
      process.execPath,
      [join(ROOT, 'dist', 'scripts', 'generate.js'), '--out', file, '--size', size, '--quiet'],
      {
        stdio: 'inherit',
      },
    );
  }
  return file;
}
