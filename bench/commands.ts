/**
 * Each memlens command on one snapshot, each in a fresh process with stdout sent to /dev/null, so
 * the figures are decode + analysis + rendering, and peak RSS shows whether a command streams its
 * output (events/blocks --format csv) or holds it.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_FLAGS } from '../src/node/node-flags.js';

interface CommandMeasurement {
  ms: number;
  cpuMs: number;
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
  commandTable(measureJs, file, label, runs, BENCH_COMMANDS);
}

function commandTable(
  measureJs: string,
  file: string,
  label: string,
  runs: number,
  templates: readonly (readonly string[])[],
  withCpu = false,
): void {
  console.log(`| command | wall |${withCpu ? ' CPU (user+sys) |' : ''} peak RSS | exit |`);
  console.log(`|---|---|${withCpu ? '---|' : ''}---|---|`);
  for (const template of templates) {
    let best: CommandMeasurement | undefined;
    let rss = 0;
    for (let i = 0; i < runs; i++) {
      const m = measureCommand(measureJs, file, template);
      rss = Math.max(rss, m.maxRssBytes);
      if (!best || m.ms < best.ms) best = m;
    }
    console.log(
      `| memlens ${shownCommand(template, label)} | ${(best!.ms / 1000).toFixed(2)} s |${withCpu ? ` ${(best!.cpuMs / 1000).toFixed(2)} s |` : ''} ${(rss / 1e6).toFixed(0)} MB | ${best!.exitCode} |`,
    );
  }
}

function shownCommand(template: readonly string[], label: string): string {
  return template.map((a) => (a === 'FILE' ? label : a === 'OUT' ? 'out.pickle' : a)).join(' ');
}

/**
 * `gc` and `diagnose` on a trace with thousands of collector bursts (issue 12: a report per burst
 * took 16.9 s and printed 7,200 tables). `diagnose` is measured only once the CLI has it.
 */
export function benchCollector(
  mainJs: string,
  measureJs: string,
  file: string,
  label: string,
  runs: number,
): void {
  const gc = spawnSync(process.execPath, [...NODE_FLAGS, mainJs, 'gc', file, '--json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const devices = (
    JSON.parse(gc.stdout) as { files: { devices: { bursts: unknown[]; patterns: unknown[] }[] }[] }
  ).files[0]!.devices;
  const bursts = devices.reduce((n, d) => n + d.bursts.length, 0);
  const patterns = devices.reduce((n, d) => n + d.patterns.length, 0);
  console.log(
    `\ngc and diagnose on ${label}: ${bursts.toLocaleString('en-US')} collector bursts in ${patterns} pattern(s) (stdout to /dev/null; best of ${runs}):\n`,
  );
  const templates: string[][] = [
    ['gc', 'FILE'],
    ['gc', 'FILE', '--json'],
  ];
  const hasDiagnose =
    spawnSync(process.execPath, [...NODE_FLAGS, mainJs, 'diagnose', '--help'], { stdio: 'ignore' }).status ===
    0;
  if (hasDiagnose) templates.push(['diagnose', 'FILE'], ['diagnose', 'FILE', '--json']);
  commandTable(measureJs, file, label, runs, templates, true);
  if (!hasDiagnose) console.log('\nmemlens diagnose: skipped, this build has no `diagnose` command yet');
}
