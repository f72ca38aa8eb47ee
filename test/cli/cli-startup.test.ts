import { execFileSync } from 'node:child_process';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandsFor } from '../../src/cli/command-table.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = 'dist/cli/main.js';
const EXAMPLE = 'examples/example_snapshot.pickle';

function registered(register: (p: Command) => void): string[] {
  const program = new Command();
  register(program);
  return program.commands.map((c) => c.name());
}

describe('memlens loads only the command it runs', () => {
  it('each table entry names exactly the commands its module registers', async () => {
    for (const c of COMMANDS) expect(registered(await c.load())).toEqual([...c.names]);
  });

  it('a bare FILE reaches diagnose; help reaches every command', () => {
    expect(commandsFor([EXAMPLE]).flatMap((c) => c.names)).toEqual(['diagnose']);
    expect(commandsFor(['--json', 'summary', 'x']).flatMap((c) => c.names)).toEqual(['summary']);
    expect(commandsFor(['--help'])).toBe(COMMANDS);
    expect(commandsFor(['help'])).toBe(COMMANDS);
  });

  it('--help lists every command', () => {
    const help = execFileSync(process.execPath, [...NODE_FLAGS, CLI, '--help'], { encoding: 'utf8' });
    for (const name of COMMANDS.flatMap((c) => c.names)) expect(help).toMatch(new RegExp(`^  ${name} `, 'm'));
  });

  // Loading every command opened ~290 modules at start, and memlens failed under ulimit -n 64.
  it.each([['summary', EXAMPLE], [EXAMPLE]])('starts under ulimit -n 64: memlens %s', (...args) => {
    const cmd = [process.execPath, ...NODE_FLAGS, CLI, ...args].map((a) => `'${a}'`).join(' ');
    const out = execFileSync('bash', ['-c', `ulimit -n 64; exec ${cmd}`], { encoding: 'utf8' });
    expect(out).toContain(EXAMPLE);
  });
});
