import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');

/**
 * The commands of a report as a user copies them: from a line holding `prompt` ("$ ", "see: ")
 * with what follows it, through the lines it continues onto (each before ends in " \").
 */
export function printedCommands(text: string, prompt = '$ '): string[] {
  const start = new RegExp(`^ *${prompt.replace(/[$]/g, '\\$')}`);
  const out: string[] = [];
  let current: string[] | null = null;
  for (const line of text.split('\n')) {
    if (current === null && !start.test(line)) continue;
    current ??= [];
    current.push(current.length === 0 ? line.replace(start, '') : line);
    if (!line.endsWith(' \\')) {
      out.push(current.join('\n'));
      current = null;
    }
  }
  return out;
}

/**
 * `memlens` on the PATH twice over, in folders under `base`: `echo` only says how the shell split
 * its words (NUL-separated), `real` runs the built CLI.
 */
export function memlensOnPath(base: string): { echo: string; real: string } {
  const echo = join(base, 'echo-bin');
  const real = join(base, 'real-bin');
  for (const [bin, body] of [
    [echo, `printf '%s\\0' "$@"`],
    [real, `exec '${process.execPath}' ${NODE_FLAGS.join(' ')} '${CLI}' "$@"`],
  ] as const) {
    mkdirSync(bin);
    writeFileSync(join(bin, 'memlens'), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, 'memlens'), 0o755);
  }
  return { echo, real };
}

/** A command pasted into a POSIX shell whose PATH starts with `bin`. */
export function inShell(bin: string, command: string) {
  return spawnSync('/bin/sh', ['-c', command], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
}
