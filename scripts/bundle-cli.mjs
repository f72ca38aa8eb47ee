// Bundles the CLI that tsc compiled (dist/cli/main.js and what it imports, npm dependencies
// included) into a few files in dist/cli/, the entry replacing tsc's main.js: loading some 150
// modules one by one (open, stat, resolve, compile, and the CJS lexer for commander and
// cli-table3) was about a fifth of `memlens summary` on a corpus file. Each command stays a chunk
// of its own, loaded when it runs, and DuckDB and the web app stay out of the bundle (loaded at
// run time, as before). tsc's output stays beside it: worker threads and the server's files are
// found from it. `npm run build` runs this after tsc; src/ stays the source of truth.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const out = join(dist, 'cli');
const entry = join(out, 'main.js');
/** Chunk files carry this prefix, so a rebuild can remove the last build's without touching tsc's. */
const PREFIX = 'bundled.';
const MANIFEST = `${PREFIX}modules.json`;

/**
 * In a bundle, `import.meta.url` is the chunk's URL, not the module's: a module that finds files
 * beside itself (package.json, worker scripts, the web app, the Python helper) would look in
 * dist/cli/. Each module's `import.meta.url` becomes the URL its own tsc output has, which is
 * where those relative paths were written to lead.
 */
function moduleUrls() {
  return {
    name: 'memlens-module-urls',
    transform(code, id) {
      if (!id.startsWith(dist + sep) || !code.includes('import.meta.url')) return null;
      const own = relative(out, id).split(sep).join('/');
      return code.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`);
    },
  };
}

export async function bundleCli() {
  if (readFileSync(entry, 'utf8').includes(PREFIX))
    throw new Error(`${entry} is a bundle already: run tsc -p tsconfig.build.json first (npm run build)`);
  for (const name of readdirSync(out)) if (name.startsWith(PREFIX)) rmSync(join(out, name));
  // tsc's map of the entry would describe the file the bundle replaces.
  rmSync(`${entry}.map`, { force: true });
  const { output } = await build({
    input: entry,
    platform: 'node',
    // DuckDB is a native module, required at run time by the export and sql commands only.
    external: [/^node:/, '@duckdb/node-api'],
    plugins: [moduleUrls()],
    logLevel: 'warn',
    output: {
      dir: out,
      format: 'esm',
      entryFileNames: 'main.js',
      chunkFileNames: `${PREFIX}[name]-[hash].js`,
    },
  });
  writeFileSync(join(out, MANIFEST), `${JSON.stringify(sources(output), null, 1)}\n`);
}

/** Per file written, the modules bundled into it (relative to the package): which code a command loads. */
function sources(output) {
  const chunks = output.filter((o) => o.type === 'chunk');
  return Object.fromEntries(
    chunks.map((c) => [c.fileName, c.moduleIds.map((id) => relative(root, id).split(sep).join('/')).sort()]),
  );
}

await bundleCli();
