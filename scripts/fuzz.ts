import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { fuzz } from '../test/helpers/fuzz.js';

/** The long fuzz run: `npm run fuzz -- --cases 100000 [--seed N] [--max-size BYTES] [DIR...]`. */
const program = new Command()
  .name('fuzz')
  .argument('[dirs...]', 'folders of seed pickles', [
    resolve('..', 'shared', 'corpus'),
    resolve('fixtures', 'edge'),
  ])
  .option('--cases <n>', 'number of mutated inputs', '20000')
  .option('--seed <n>', 'first seed', '1')
  .option('--max-size <bytes>', 'skip seed files larger than this', '4000000')
  .action((dirs: string[], opts: { cases: string; seed: string; maxSize: string }) => {
    const files = dirs
      .filter(existsSync)
      .flatMap((d) => readdirSync(d).map((f) => join(d, f)))
      .filter((f) => /\.(pickle|json)$/.test(f) && statSync(f).size <= Number(opts.maxSize));
    const inputs = files.map((f) => new Uint8Array(readFileSync(f)));
    const t0 = performance.now();
    const r = fuzz(inputs, Number(opts.cases), Number(opts.seed));
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(
      `${r.cases} cases over ${inputs.length} seed files in ${s} s: ${r.loaded} loaded, ${r.rejected} rejected cleanly, ${r.failures.length} failures, slowest ${r.slowestMs.toFixed(0)} ms`,
    );
    for (const f of r.failures.slice(0, 20)) console.log(`  seed ${f.seed} (${f.mutation}): ${f.error}`);
    if (r.failures.length > 0) process.exitCode = 1;
  });
program.parse();
