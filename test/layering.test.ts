/**
 * The building's rules, in the spirit of Perfetto's import rules: data flows one way, each layer
 * of the engine is entered through its front door, and tooling never ships. A new import that
 * climbs a layer or skips a door fails here with the file and the import named.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((f) => {
    const p = join(dir, f);
    if (f === 'node_modules' || f === 'dist') return [];
    return statSync(join(ROOT, p)).isDirectory() ? files(p) : /\.tsx?$/.test(f) ? [p] : [];
  });
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Every module specifier of a file: static and dynamic imports, re-exports, worker URLs. */
function specifiers(text: string): string[] {
  const code = withoutComments(text);
  return [
    ...code.matchAll(/(?:import|export)[^'";]*?from\s*['"]([^'"]+)['"]/g),
    ...code.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
    ...code.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...code.matchAll(/new URL\(\s*['"](\.[^'"]+\.js)['"]\s*,\s*import\.meta\.url/g),
  ].map((m) => m[1]!);
}

/** The repository path an import points at (relative imports only). */
function target(file: string, spec: string): string {
  return relative(ROOT, join(ROOT, dirname(file), spec));
}

/** Which room a repository path is in: an engine layer, a shell, the web app or tooling. */
function roomOf(path: string): string {
  const engine = /^src\/engine\/([^/]+)\//.exec(path);
  if (engine) return `engine/${engine[1]}`;
  const src = /^src\/([^/]+)\//.exec(path);
  if (src) return src[1]!;
  if (path.startsWith('web/')) return 'web';
  return path.split('/')[0]!;
}

/**
 * Which rooms each room may import. The engine's layers, bottom to top: values and base; the
 * model; decode and encode; load; derived state; the questions (analyses) and the simulator; views
 * and export rows. Outside it: node (files, workers, cache, export writers) under server under cli;
 * the web app sees only the engine and the wire types.
 */
const ENGINE_BELOW: Record<string, string[]> = {
  values: [],
  base: [],
  'run-layout': [],
  model: ['values', 'base'],
  decode: ['values', 'base', 'model'],
  encode: ['values', 'base', 'model'],
  load: ['values', 'base', 'model', 'decode'],
  derived: ['values', 'base', 'model'],
  simulate: ['values', 'base', 'model', 'encode'],
  analyses: ['values', 'base', 'model', 'encode', 'derived', 'run-layout', 'simulate'],
  views: ['values', 'base', 'model', 'derived', 'analyses'],
  export: ['values', 'base', 'model', 'derived', 'analyses'],
};
const ENGINE = Object.keys(ENGINE_BELOW).map((l) => `engine/${l}`);
const SHELLS: Record<string, string[]> = {
  wire: ENGINE,
  node: [...ENGINE, 'wire'],
  server: [...ENGINE, 'wire', 'node'],
  cli: [...ENGINE, 'wire', 'node', 'server'],
  web: [...ENGINE, 'wire'],
};

function allowed(from: string, to: string): boolean {
  if (from === to) return true;
  if (from.startsWith('engine/')) return (ENGINE_BELOW[from.slice(7)] ?? []).includes(to.slice(7));
  return SHELLS[from]?.includes(to) ?? false;
}

/**
 * Outside the engine, only front doors may be imported: a layer's index.ts, and for the layers made
 * of one folder per question or view (analyses, views), that folder's index.ts.
 */
function throughDoor(from: string, path: string): boolean {
  if (from.startsWith('engine/') || !path.startsWith('src/engine/')) return true;
  if (/^src\/engine\/(analyses|views)\//.test(path))
    return /^src\/engine\/(analyses|views)\/[^/]+\/index\.(js|ts)$/.test(path);
  return /^src\/engine\/[^/]+\/index\.(js|ts)$/.test(path);
}

const PRODUCT = [...files('src'), ...files('web/src')];

describe('the engine has no Node or DOM dependencies', () => {
  for (const file of files('src/engine')) {
    it(file, () => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const s of specifiers(text)) expect(s.startsWith('.'), `${s} in ${file}`).toBe(true);
      const code = withoutComments(text).replace(/^\s*(import|export)[^;]*from\s+['"][^'"]+['"];?/gm, '');
      expect(code).not.toMatch(/\brequire\(|\b(process|Buffer|document|window|globalThis\.process)\./);
    });
  }
});

describe('every import goes down a layer, and through the front door', () => {
  for (const file of PRODUCT) {
    it(file, () => {
      const from = roomOf(file);
      for (const spec of specifiers(readFileSync(join(ROOT, file), 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const path = target(file, spec);
        const to = roomOf(path);
        expect(allowed(from, to), `${file} (${from}) imports ${path} (${to})`).toBe(true);
        expect(throughDoor(from, path), `${file} skips the front door: ${path}`).toBe(true);
      }
    });
  }
});

describe('tooling stays out of the product', () => {
  it('no product file imports the generator, benchmarks, scripts or tests', () => {
    for (const file of PRODUCT)
      for (const spec of specifiers(readFileSync(join(ROOT, file), 'utf8')))
        if (spec.startsWith('.')) expect(target(file, spec), file).toMatch(/^(src|web|python|package\.json)/);
  });
  it('the tools import the engine through its front doors too', () => {
    for (const file of [...files('bench'), ...files('scripts')])
      for (const spec of specifiers(readFileSync(join(ROOT, file), 'utf8')))
        if (spec.startsWith('.'))
          expect(throughDoor('tools', target(file, spec)), `${file}: ${spec}`).toBe(true);
  });
});

describe('the rules themselves', () => {
  it('refuse a climb, a skipped door and a shell the web app must not see', () => {
    expect(allowed('engine/model', 'engine/analyses')).toBe(false);
    expect(allowed('engine/analyses', 'engine/views')).toBe(false);
    expect(allowed('node', 'cli')).toBe(false);
    expect(allowed('server', 'cli')).toBe(false);
    expect(allowed('web', 'server')).toBe(false);
    expect(throughDoor('web', 'src/engine/derived/frames/short-path.js')).toBe(false);
    expect(throughDoor('cli', 'src/engine/analyses/oom/index.js')).toBe(true);
    expect(throughDoor('cli', 'src/engine/analyses/oom/verdict.js')).toBe(false);
    expect(throughDoor('web', 'src/engine/model/index.js')).toBe(true);
    expect(roomOf('src/engine/analyses/oom/oom.ts')).toBe('engine/analyses');
    expect(specifiers(`import { a } from '../x.js';\nconst w = new URL('./w.js', import.meta.url);`)).toEqual(
      ['../x.js', './w.js'],
    );
  });
});
