import { readFileSync } from 'node:fs';

/** The package's version, read from its package.json (two levels up from dist/cli/ and src/cli/). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
