/** What a CLI test file sets up: the built CLI's path, and a scratch folder removed after its tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');

export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
