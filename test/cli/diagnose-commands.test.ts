import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { inShell, memlensOnPath, printedCommands } from '../helpers/printed-commands.js';

/**
 * `memlens FILE` on a file of three devices whose OOM is on device 2 leads with that OOM, and
 * every command it prints runs as printed, copied whole into a POSIX shell, at 60, 80 and 200
 * columns, under a 150-character path with spaces and both kinds of quotes.
 */
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const MiB = 2 ** 20;
const PATH_LENGTH = 150;

describe('memlens diagnose: the worst finding first, and commands that run as printed', () => {
  const base = mkdtempSync(join(tmpdir(), 'memlens-cmds-'));
  // A folder named with spaces and quotes, padded so that the file's path is 150 characters.
  const name = `snap 'one' "two".pickle`;
  const stem = join(base, `it's a "run" dir `);
  const dir = stem + 'x'.repeat(PATH_LENGTH - stem.length - 1 - name.length);
  mkdirSync(dir);
  const file = (n: string) => join(dir, n === 'three' ? name : `${n} 'x'.pickle`);
  const three = file('three');
  expect(three).toHaveLength(PATH_LENGTH);
  writeFileSync(
    three,
    generateSnapshotBytes({
      events: 4000,
      seed: 7,
      devices: 3,
      devicePlants: { 2: { oomCause: 'exhaustion' } },
    }).bytes,
  );
  writeFileSync(file('leak'), generateSnapshotBytes({ events: 20_000, seed: 41, leakBytes: 3 * MiB }).bytes);
  writeFileSync(
    file('cycles'),
    generateSnapshotBytes({ events: 25_000, seed: 51, cycleBytes: [2 * MiB, 3 * MiB + 100], gcEvery: 4 })
      .bytes,
  );
  // `memlens` on the PATH twice over: one that only says how the shell split its words, and the CLI.
  const { echo, real } = memlensOnPath(base);
  const diagnose = (width: number, ...args: string[]) =>
    spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, MEMLENS_WIDTH: String(width) },
    });

  it('leads with the OOM of device 2, named; --json keeps each device and adds the order', () => {
    const r = diagnose(100, three);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[1]).toBe("cuda:0, cuda:1, cuda:2: every device's findings, worst first");
    expect(lines[2]).toMatch(
      /^ {2}1\. OOM +Out of memory at entry [\d,]+ \(a [\d.]+ GiB request\) — exhaustion/,
    );
    expect(lines.slice(3, 6).find((l) => l.includes('at stake'))).toMatch(/^ +cuda:2 · [\d.]+ GiB at stake/);
    // The devices with nothing found say so.
    expect(r.stdout).toMatch(/✓ cuda:0: No problem found\./);
    expect(r.stdout).toMatch(/✓ cuda:1: No problem found\./);
    const doc = JSON.parse(diagnose(100, '--json', three).stdout).files[0];
    expect(doc.devices.map((d: { label: string }) => d.label)).toEqual(['cuda:0', 'cuda:1', 'cuda:2']);
    expect(doc.order[0]).toEqual({ device: 2, finding: 0 });
    expect(doc.devices[2].findings[0]).toMatchObject({ kind: 'oom', severity: 'oom' });
    expect(doc.order).toHaveLength(doc.devices.flatMap((d: { findings: unknown[] }) => d.findings).length);
  });

  it('every printed command, at 60, 80 and 200 columns, is one the shell reads whole and that runs', () => {
    const runs = new Map<string, string>();
    for (const width of [60, 80, 200]) {
      const r = diagnose(width, three, file('leak'), file('cycles'));
      expect(r.status, r.stderr).toBe(0);
      const commands = printedCommands(r.stdout);
      expect(commands.length).toBeGreaterThanOrEqual(10);
      for (const command of commands) {
        const read = inShell(echo, command);
        expect(read.status, command).toBe(0);
        const argv = read.stdout.split('\0').slice(0, -1);
        // The file's path reaches memlens as one word, whole, quotes and spaces and all.
        expect(
          argv.some((a) => a.startsWith(dir)),
          command,
        ).toBe(true);
        for (const a of argv.filter((x) => x.startsWith(dir)))
          expect([three, file('leak'), file('cycles')]).toContain(a);
        runs.set(JSON.stringify(argv), command);
      }
      // Only a command may pass the width, and only by a word a line cannot hold.
      for (const line of r.stdout.split('\n'))
        if (line.length > width && !line.startsWith(dir)) expect(line, `at ${width}`).toMatch(/^ *\$ |^'/);
    }
    expect(new Set([...runs.keys()].map((a) => JSON.parse(a)[0]))).toEqual(
      new Set(['oom', 'peak', 'leaks', 'gc', 'frag']),
    );
    for (const command of runs.values()) {
      const r = inShell(real, command);
      expect(r.status, `${command}\n${r.stderr}`).toBe(0);
    }
  }, 600_000);
});
