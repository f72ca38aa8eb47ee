import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

/** Every command, not only summary and diagnose, says when it left impossible parts of a file out. */
const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'memlens-impossible-warn-'));
execFileSync(process.execPath, [join(ROOT, 'dist-tools', 'scripts', 'make-impossible.js'), dir]);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('impossible parts of a file are named by every command', () => {
  const file = join(dir, 'block-larger-than-segment.pickle');
  for (const command of [['peak'], ['frag'], ['categories'], ['leaks'], ['oom'], ['peak', '--json']]) {
    it(command.join(' '), () => {
      const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, command[0]!, file, ...command.slice(1)], {
        encoding: 'utf8',
      });
      expect(r.status).toBe(0);
      expect(r.stderr).toContain(
        `memlens: ${file}: warning: impossible in this file: 1 block is larger than its segment`,
      );
    });
  }

  it('says nothing of the kind for a sound file', () => {
    const sound = readdirSync(join(ROOT, 'examples')).find((f) => f.endsWith('.pickle'))!;
    const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'peak', join(ROOT, 'examples', sound)], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
  });
});
