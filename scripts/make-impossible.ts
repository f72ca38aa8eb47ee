import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pickleDumps } from '../src/engine/encode/index.js';
import { impossibleCases } from '../test/helpers/impossible.js';

/**
 * `node dist-tools/scripts/make-impossible.js DIR`: writes DIR/<case>.pickle for each impossible
 * snapshot of test/helpers/impossible.ts, and DIR/<case>.expected.json with what memlens must say.
 */
const dir = process.argv[2];
if (dir === undefined) {
  process.stderr.write('usage: make-impossible DIR\n');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
for (const c of impossibleCases()) {
  writeFileSync(join(dir, `${c.name}.pickle`), pickleDumps(c.value));
  const { value: _, ...expected } = c;
  writeFileSync(join(dir, `${c.name}.expected.json`), `${JSON.stringify(expected, null, 1)}\n`);
}
process.stdout.write(`wrote ${impossibleCases().length} impossible snapshots to ${dir}\n`);
