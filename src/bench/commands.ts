/**
 * Each memlens command on one snapshot, each in a fresh process with stdout sent to /dev/null, so
 * the figures are decode + analysis + rendering, and peak RSS shows whether a command streams its
 * output (events/blocks --format csv) or holds it.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_FLAGS } from '../cli/node-flags.js';

interface CommandMeasurement {
  ms: number;
  maxRssBytes: number;
  exitCode: number;
}

/** The commands measured, as a user would type them (FILE is the snapshot, OUT a scratch file). */
const BENCH_COMMANDS: readonly (readonly string[])[] = [
  ['summary', 'FILE'],
  ['peak', 'FILE'],
  ['oom', 'FILE'],
  ['leaks', 'FILE'],
  ['gc', 'FILE'],
  ['frag', 'FILE'],
  ['categories', 'FILE'],
  ['diff', 'FILE', 'FILE'],
  ['events', 'FILE', '--format', 'csv'],
  ['blocks', 'FILE', '--format', 'csv'],
  ['slice', 'FILE', '--range', '100000:600000', '-o', 'OUT'],
  ['simulate', 'FILE', '--set', 'expandable_segments:True'],
  ['simulate', 'FILE', '--sweep'],
];

function measureCommand(measureJs: string, file: string, template: readonly string[]): CommandMeasurement {
  const dir = mkdtempSync(join(tmpdir(), 'memlens-bench-'));
  const result = join(dir, 'result.json');
  const args = template.map((a) => (a === 'FILE' ? file : a === 'OUT' ? join(dir, 'out.pickle') : a));
  const devNull = openSync('/dev/null', 'w');
  try {
    const run = spawnSync(process.execPath, [...NODE_FLAGS, measureJs, 'cli', result, ...args], {
      stdio: ['ignore', devNull, 'inherit'],
    });
    if (run.error) throw run.error;
    return JSON.parse(readFileSync(result, 'utf8')) as CommandMeasurement;
  } finally {
    closeSync(devNull);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints a Markdown table: command, wall time (best of `runs`), peak RSS (largest), exit code. */
export function benchCommands(measureJs: string, file: string, label: string, runs: number): void {
  console.log(`\ncommands on ${label} (stdout to /dev/null; best of ${runs}):\n`);
  console.log('| command | wall | peak RSS | exit |');
  console.log('|---|---|---|---|');
  for (const template of BENCH_COMMANDS) {
    let best: CommandMeasurement | undefined;
    let rss = 0;
    for (let i = 0; i < runs; i++) {
      const m = measureCommand(measureJs, file, template);
      rss = Math.max(rss, m.maxRssBytes);
      if (!best || m.ms < best.ms) best = m;
    }
    const shown = template.map((a) => (a === 'FILE' ? label : a === 'OUT' ? 'out.pickle' : a)).join(' ');
    console.log(
      `| memlens ${shown} | ${(best!.ms / 1000).toFixed(2)} s | ${(rss / 1e6).toFixed(0)} MB | ${best!.exitCode} |`,
    );
  }
}
