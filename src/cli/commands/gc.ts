import type { Command } from 'commander';
import {
  type DeviceGc,
  type GcBurst,
  type GcOptions,
  gcBurstsOf,
} from '../../engine/analyses/gc/gc-bursts.js';
import { burstLivedText } from '../../engine/analyses/gc/gc-words.js';
import { formatBytes, formatCount, formatDuration } from '../../engine/format.js';
import { pc } from '../colors.js';
import { framesCell, sitesTable } from '../frames-text.js';
import { type FileOptions, parseCount, parseDevice, runFiles } from '../run-files.js';
import { headerLines } from './leaks.js';

interface GcCliOptions extends FileOptions {
  marker?: string;
  top: number;
  fullStacks?: boolean;
  minCount: number;
}

/** `memlens gc`: bursts of frees of long-lived allocations, as Python's cycle collector makes them. */
export function gcCommand(program: Command): void {
  program
    .command('gc')
    .description(
      'bursts where many long-lived allocations are freed at once (gc.collect() freeing reference cycles)',
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option(
      '--marker <name>',
      'what starts an iteration: an annotation name prefix, or a function called once per step',
    )
    .option('--min-count <n>', 'a burst frees at least n long-lived allocations', parseCount, 4)
    .option('--top <n>', 'how many allocating sites to list per burst', parseCount, 5)
    .option('--full-stacks', 'group by whole stacks, not only frames in your own code')
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "devices": [...]}]}')
    .action((files: string[], opts: GcCliOptions) => {
      const gcOpts: GcOptions = {
        top: opts.top,
        fullStacks: opts.fullStacks ?? false,
        minCount: opts.minCount,
      };
      if (opts.marker !== undefined) gcOpts.marker = opts.marker;
      return runFiles(files, opts, (snapshot, devices) => {
        const per = devices.map((d) => gcBurstsOf(snapshot, d, gcOpts));
        return { json: { devices: per }, text: per.map(render).join('\n\n') };
      });
    });
}

function render(r: DeviceGc): string {
  const lines = headerLines(r);
  for (const b of r.bursts) lines.push(...burstText(b));
  return lines.join('\n');
}

function burstText(b: GcBurst): string[] {
  const when = [
    `entry ${formatCount(b.entry)}`,
    b.time_us !== null ? `time_us ${b.time_us}` : null,
    b.iteration_name !== null ? `in ${b.iteration_name}` : null,
  ].filter((x) => x !== null);
  const freed = b.free_frames[0];
  const site = freed ? `${freed.name} (${freed.filename}:${freed.line})` : 'a site with no stack';
  const lines = [
    `  burst at ${when.join(', ')}: ${pc.bold(`${formatCount(b.count)} allocations, ${formatBytes(b.bytes)}`)} freed` +
      (b.duration_us !== null ? ` within ${formatDuration(b.duration_us)}` : ''),
    `    ${formatCount(b.long_lived)} long-lived; they had lived ${burstLivedText(b)}`,
    `    freed at ${site}${b.through_gc ? pc.yellow(' — through the garbage collector (gc)') : ''}`,
    '    allocated at:',
    sitesTable(
      ['bytes', 'count', 'allocated at (innermost first)'],
      b.groups.map((g) => [formatBytes(g.bytes), formatCount(g.count), framesCell(g.frames)]),
    ),
  ];
  if (b.other_groups > 0) lines.push(`    … ${formatCount(b.other_groups)} more sites`);
  return lines;
}
