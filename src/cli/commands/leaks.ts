import type { Command } from 'commander';
import type { Unreleased } from '../../engine/analyses/leaks/index.js';
import {
  type DeviceLeaks,
  type LeakGroup,
  type LeakOptions,
  leakIterationsSpan,
  leakKind,
  leaksOf,
} from '../../engine/analyses/leaks/index.js';
import { formatBytes, formatCount, plural, sinceStart } from '../../engine/base/index.js';
import type { IterationSummary } from '../../engine/derived/index.js';
import { deviceName } from '../../engine/model/index.js';
import { pc } from '../text/colors.js';
import { framesCell, sitesTable } from '../text/frames-text.js';
import { type FileOptions, parseCount, parseDevice, runFiles } from '../text/run-files.js';
import { parseRange } from './tables.js';

interface LeaksCliOptions extends FileOptions {
  marker?: string;
  range?: [number, number];
  timeRange?: [number, number];
  top: number;
  fullStacks?: boolean;
  minIterations: number;
}

/** `memlens leaks`: what outlives its iteration and keeps accumulating; what a window left behind. */
export function leaksCommand(program: Command): void {
  program
    .command('leaks')
    .description(
      'allocations that outlive their iteration and accumulate, by allocating site; unreleased allocations of any window',
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option(
      '--marker <name>',
      'what starts an iteration: an annotation name prefix, or a function called once per step',
    )
    .option(
      '--range <a:b>',
      'also: allocations made in trace entries a..b still allocated after b',
      parseRange,
    )
    .option('--time-range <a:b>', 'the same for a time_us window (µs, as in the trace)', parseRange)
    .option('--top <n>', 'how many allocating sites to list', parseCount, 10)
    .option('--full-stacks', 'group by whole stacks, not only frames in your own code')
    .option('--min-iterations <n>', 'a leak keeps allocations from at least n iterations', parseCount, 3)
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "devices": [...]}]}')
    .action((files: string[], opts: LeaksCliOptions) => {
      const leakOpts: LeakOptions = {
        top: opts.top,
        fullStacks: opts.fullStacks ?? false,
        minIterations: opts.minIterations,
      };
      if (opts.marker !== undefined) leakOpts.marker = opts.marker;
      if (opts.range) leakOpts.window = { entries: opts.range };
      else if (opts.timeRange) leakOpts.window = { timeUs: opts.timeRange };
      return runFiles(files, opts, (snapshot, devices) => {
        const per = devices.map((d) => leaksOf(snapshot, d, leakOpts));
        return {
          json: { devices: per },
          text: per.map((r) => render(r, deviceName(snapshot.producer, r.device))).join('\n\n'),
        };
      });
    });
}

function render(r: DeviceLeaks, name: string): string {
  const lines = headerLines(r, name);
  if (r.iterations.count === 0 && !r.no_trace) lines.push(...howToGiveIterations());
  if (r.allocated_growth_bytes_per_iteration !== null)
    lines.push(
      `  allocated memory at the end of each iteration changes by ${formatBytes(r.allocated_growth_bytes_per_iteration)} per iteration (fitted)`,
    );
  if (r.groups.length > 0) {
    lines.push('  allocations still allocated after the next iteration ended, by allocating site:');
    lines.push(groupsTable(r));
  }
  if (r.unreleased) lines.push(...unreleasedText(r.unreleased, r.trace_start_us));
  return lines.join('\n');
}

/** The device, the iterations the analysis used, and its verdict. */
export function headerLines(r: { iterations: IterationSummary; verdict: string }, name: string): string[] {
  const tried = r.iterations.count === 0 ? r.iterations.tried.map((t) => `    tried ${t}`) : [];
  return [
    pc.bold(name),
    `  iterations: ${iterationsText(r.iterations)}`,
    ...tried,
    `  ${pc.bold(r.verdict)}`,
  ];
}

/** With no iterations found: the options that give them, so the user can judge leaks after all. */
function howToGiveIterations(): string[] {
  return [
    '  to judge leaks, say what marks a step:',
    '    --marker NAME     a record_function name prefix, or a function called once per step',
    '    --range A:B       what entries A to B allocated and still held after B (20,047:30,000)',
    '    --time-range A:B  the same for a time_us window',
  ];
}

function iterationsText(it: IterationSummary): string {
  if (it.count === 0) return it.tried.length === 0 ? `none (${it.marker})` : 'none found';
  return (
    `${formatCount(it.count)} from ${it.marker} (${it.first_name}–${it.last_name}, ` +
    `entries ${formatCount(it.first_entry!)}–${formatCount(it.last_entry!)}, ~${formatCount(it.mean_entries!)} entries each)`
  );
}

function groupsTable(r: DeviceLeaks): string {
  const rows = r.groups.map((g) => [
    kind(g),
    formatBytes(g.held_bytes),
    formatCount(g.held_count),
    g.accumulating ? formatBytes(g.bytes_per_iteration) : '—',
    leakIterationsSpan(g),
    framesCell(g.frames),
  ]);
  const table = sitesTable(
    ['', 'held', 'count', 'per iter.', 'iterations', 'allocated at (innermost first)'],
    rows,
  );
  const more =
    r.other_groups > 0 ? `\n  … ${formatCount(r.other_groups)} more sites (--top to list them)` : '';
  return table + more;
}

/** A leak (in red), or the row's kind in the same words as the web panel. */
function kind(g: LeakGroup): string {
  const k = leakKind(g);
  return k === 'leak' ? pc.red(k) : k;
}

function unreleasedText(u: Unreleased, start: number | null): string[] {
  if (u.from_entry > u.to_entry) return ['  unreleased in range: no trace entry falls in the window'];
  const from = sinceStart(u.from_time_us, start);
  const to = sinceStart(u.to_time_us, start);
  const times = from !== null && to !== null ? ` (${from}–${to} into the trace)` : '';
  const window = `entries ${formatCount(u.from_entry)}–${formatCount(u.to_entry)}${times}`;
  const lines = [
    `  unreleased in ${window}: ${pc.bold(`${plural(u.count, 'allocation')}, ${formatBytes(u.bytes)}`)} made there and still allocated at its end`,
  ];
  if (u.groups.length > 0)
    lines.push(
      sitesTable(
        ['bytes', 'count', 'allocated at (innermost first)'],
        u.groups.map((g) => [formatBytes(g.bytes), formatCount(g.count), framesCell(g.frames)]),
      ),
    );
  if (u.other_groups > 0)
    lines.push(`  … ${formatCount(u.other_groups)} more sites hold ${formatBytes(u.other_bytes)}`);
  return lines;
}
