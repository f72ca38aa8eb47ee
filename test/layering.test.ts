import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ENGINE = join(import.meta.dirname, '..', 'src', 'engine');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The engine must run unchanged in a browser Web Worker: only relative imports, no Node or DOM. */
describe('engine has no Node or DOM dependencies', () => {
  for (const file of files(ENGINE)) {
    it(relative(ENGINE, file), () => {
      const text = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
      const specifiers = [...text.matchAll(/(?:import|export)[^'";]*from\s+['"]([^'"]+)['"]/g)].map(
        (m) => m[1]!,
      );
      for (const s of specifiers) expect(s.startsWith('.'), `${s} in ${relative(ENGINE, file)}`).toBe(true);
      const code = text.replace(/^\s*(import|export)[^;]*from\s+['"][^'"]+['"];?/gm, '');
      expect(code).not.toMatch(/\brequire\(|\b(process|Buffer|document|window|globalThis\.process)\./);
    });
  }
});

/**
 * Data flows one way (bytes -> decode -> model -> analyses): a layer imports only from the layers
 * below it, so the model can be built from any decoder and analyses never reach into decoding.
 */
const MAY_IMPORT: Record<string, string[]> = {
  values: [],
  run: [],
  model: ['values'],
  decode: ['values', 'model'],
  encode: ['values', 'model'],
  analyses: ['values', 'model', 'encode', 'run'],
  simulate: ['values', 'model', 'encode'],
};

describe('engine layers import only from below', () => {
  for (const [layer, below] of Object.entries(MAY_IMPORT)) {
    it(layer, () => {
      const layerDir = join(ENGINE, layer);
      for (const file of files(layerDir)) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/from\s+['"](\.[^'"]+)['"]/g)) {
          const target = relative(ENGINE, join(file, '..', m[1]!));
          const top = target.includes('/') ? target.split('/')[0]! : '';
          if (top === '' || top === layer) continue;
          expect(below, `${relative(ENGINE, file)} imports ${target}`).toContain(top);
        }
      }
    });
  }
});
