// Bundles what tsc compiled into a few files per entry, each entry replacing tsc's file: the CLI
// (dist/cli/main.js) and each worker thread's script (dist/node/workers/*-worker.js), npm
// dependencies included. Loading some 150 modules one by one (open, stat, resolve, compile, and
// the CJS lexer for commander and cli-table3) was about a fifth of `memlens summary` on a corpus
// file, and a worker paid it again as it started. Each command stays a chunk of its own, loaded
// when it runs; DuckDB and the web app stay out of the bundle (loaded at run time, as before).
// tsc's output stays beside it. `npm run build` runs this after tsc; src/ stays the source of truth.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
/** Chunk files carry this prefix, so a rebuild can remove the last build's without touching tsc's. */
const PREFIX = 'bundled.';
const MANIFEST = `${PREFIX}modules.json`;

/**
 * In a bundle, `import.meta.url` is the chunk's URL, not the module's: a module that finds files
 * beside itself (package.json, worker scripts, the web app, the Python helper) would look in the
 * bundle's folder. Each module's `import.meta.url` becomes the URL its own tsc output has, which
 * is where those relative paths were written to lead.
 */
function moduleUrls(out) {
  return {
    name: 'memlens-module-urls',
    transform(code, id) {
      if (!id.startsWith(dist + sep) || !code.includes('import.meta.url')) return null;
      const own = relative(out, id).split(sep).join('/');
      return code.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`);
    },
  };
}

/** Bundles the entries (file names in `out`, tsc's output) into `out`, in their place. */
async function bundle(out, entries) {
  for (const name of entries)
    if (readFileSync(join(out, name), 'utf8').includes(PREFIX))
      throw new Error(
        `${join(out, name)} is a bundle already: run tsc -p tsconfig.build.json first (npm run build)`,
      );
  for (const name of readdirSync(out)) if (name.startsWith(PREFIX)) rmSync(join(out, name));
  // tsc's maps of the entries would describe the files the bundle replaces.
  for (const name of entries) rmSync(join(out, `${name}.map`), { force: true });
  const { output } = await build({
    input: Object.fromEntries(entries.map((name) => [basename(name, '.js'), join(out, name)])),
    platform: 'node',
    // DuckDB is a native module, required at run time by the export and sql commands only.
    external: [/^node:/, '@duckdb/node-api'],
    plugins: [moduleUrls(out)],
    logLevel: 'warn',
    output: {
      dir: out,
      format: 'esm',
      entryFileNames: '[name].js',
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

const workers = join(dist, 'node', 'workers');
await bundle(join(dist, 'cli'), ['main.js']);
await bundle(
  workers,
  readdirSync(workers).filter((name) => name.endsWith('-worker.js')),
);
