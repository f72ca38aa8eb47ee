import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../../src/node/files/write-file.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');

/** What a crafted folder can hold: a FIFO named like a cycle file, a link at a temporary file's name. */
const dir = mkdtempSync(join(tmpdir(), 'memlens-hostile-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('files memlens reads or writes, crafted', () => {
  it('a FIFO named *.json in cycles/ is refused at once, never read (a read would block for ever)', () => {
    mkdirSync(join(dir, 'cycles'));
    execFileSync('mkfifo', [join(dir, 'cycles', 'a.json')]);
    execFileSync('mkfifo', [join(dir, 'b.json')]);
    // In a process of its own: on a blocking read it would hang, and is killed after 20 s.
    const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, 'cycles', dir], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.signal).toBeNull();
    expect(r.stderr).toMatch(/a\.json: not a memlens cycle file: not a regular file/);
  });

  it('a link planted at the temporary name is not written through: the file it points at is untouched', () => {
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'keep me');
    const out = join(dir, 'out.html');
    symlinkSync(victim, `${out}.memlens-${process.pid}.tmp`);
    writeFileAtomically(out, 'the report');
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect(readFileSync(out, 'utf8')).toBe('the report');
  });
});
