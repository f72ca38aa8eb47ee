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
