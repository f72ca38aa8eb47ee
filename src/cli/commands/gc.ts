import type { Command } from 'commander';
import { type CycleCitation, citationText } from '../../engine/analyses/cycles/index.js';
import type { BurstPattern } from '../../engine/analyses/gc/index.js';
import {
  burstLivedText,
  burstWhenText,
  type DeviceGc,
  type GcBurst,
  type GcOptions,
  gcBurstsOf,
  patternCountText,
  patternEachText,
  patternPeriodText,
  patternSpanText,
} from '../../engine/analyses/gc/index.js';
import { formatBytes, formatCount, formatDuration, plural } from '../../engine/base/index.js';
import { formatFrame, topUserFrame } from '../../engine/derived/index.js';
import type { Frame } from '../../engine/model/index.js';
import { deviceName } from '../../engine/model/index.js';
import { citeCycles, recordedCycles } from '../../node/cycles/cycle-inputs.js';
import { pc } from '../text/colors.js';
import { framesCell, sitesTable } from '../text/frames-text.js';
import { type FileOptions, parseCount, parseDevice, runFiles } from '../text/run-files.js';
import { headerLines } from './leaks.js';

interface GcCliOptions extends FileOptions {
  marker?: string;
  top: number;
  fullStacks?: boolean;
  minCount: number;
  outliers: number;
}

/** `memlens gc`: bursts of frees of long-lived allocations, as Python's cycle collector makes them. */
export function gcCommand(program: Command): void {
  program
    .command('gc')
    .description(
      'bursts where many long-lived allocations are freed at once (gc.collect() freeing reference cycles)',
    )
    .argument(
      '<file...>',
      'snapshot files (.pickle, .json, optionally gzipped) or run directories; recorded cycles (memlens record --cycles) given alongside or in a run are cited',
    )
    .option(
      '--marker <name>',
      'what starts an iteration: an annotation name prefix, or a function called once per step',
    )
    .option('--min-count <n>', 'a burst frees at least n long-lived allocations', parseCount, 4)
    .option('--top <n>', 'how many allocating sites to list per burst', parseCount, 5)
    .option('--outliers <n>', 'how many bursts outside a repeating pattern to list', parseCount, 10)
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
      const recorded = recordedCycles(files);
      return runFiles(recorded.snapshotArgs, opts, (snapshot, devices, file) => {
        const per = devices.map((d) => gcBurstsOf(snapshot, d, gcOpts));
        const cited = citeCycles(recorded, snapshot, file, per, gcOpts);
        return {
          json: {
            devices: per.map((r, i) => ({
              ...r,
              bursts: r.bursts.map((b, k) => ({ ...b, cycles: cited[i]![k]! })),
            })),
          },
          text: per
            .map((r, i) => render(r, deviceName(snapshot.producer, r.device), opts.outliers, cited[i]!))
            .join('\n\n'),
        };
      });
    });
}

/** `cited`: per burst, the recorded cycles whose tensors it freed. */
function render(r: DeviceGc, name: string, shownOutliers: number, cited: CycleCitation[][]): string {
  const lines = headerLines(r, name);
  for (const p of r.patterns) lines.push(...patternText(r, p), ...patternCycles(p, cited));
  if (r.outliers.length > 0) {
    if (r.patterns.length > 0) lines.push(`  ${plural(r.outliers.length, 'burst')} outside these patterns:`);
    for (const i of r.outliers.slice(0, shownOutliers))
      lines.push(
        ...burstText(r.bursts[i]!, r.trace_start_us),
        ...cited[i]!.map((c) => `    ${citationText(c)}`),
      );
    const more = r.outliers.length - shownOutliers;
    if (more > 0)
      lines.push(`  … ${plural(more, 'more burst')} (--outliers to list them, --json lists every burst)`);
  }
  return lines.join('\n');
}

/** A collection that repeats: once, with its count, period and span, and its typical burst's sites. */
function patternText(r: DeviceGc, p: BurstPattern): string[] {
  const typical = r.bursts[p.typical]!;
  const gc =
    p.through_gc === p.count
      ? pc.yellow(' — through the garbage collector (gc)')
      : p.through_gc > 0
        ? pc.yellow(` — ${formatCount(p.through_gc)} of them through the garbage collector (gc)`)
        : '';
  return [
    `  ${pc.bold(`${patternCountText(p)} ${patternPeriodText(p)}`)}, ${patternSpanText(p, r.trace_start_us)}: ${pc.bold(patternEachText(p))}`,
    `    freed at ${freedAt(p.free_frames)}${gc}`,
    `    typical burst (${burstWhenText(typical, r.trace_start_us)}): ${formatCount(typical.long_lived)} long-lived, they had lived ${burstLivedText(typical)}`,
    ...allocatedAt(typical),
  ];
}

/** The recorded cycles a pattern's bursts freed: how many, and the first one's path in words. */
function patternCycles(p: BurstPattern, cited: CycleCitation[][]): string[] {
  const all = p.bursts.flatMap((i) => cited[i]!);
  if (all.length === 0) return [];
  const bursts = p.bursts.filter((i) => cited[i]!.length > 0).length;
  const head = `    ${plural(bursts, 'burst')} of this pattern freed tensors of ${plural(all.length, 'recorded cycle')}`;
  return [head + (all.length > 1 ? ', the first:' : ':'), `      ${citationText(all[0]!)}`];
}

function burstText(b: GcBurst, start: number | null): string[] {
  return [
    `  burst at ${burstWhenText(b, start)}: ${pc.bold(`${plural(b.count, 'allocation')}, ${formatBytes(b.bytes)}`)} freed` +
      (b.duration_us !== null ? ` within ${formatDuration(b.duration_us)}` : ''),
    `    ${formatCount(b.long_lived)} long-lived; they had lived ${burstLivedText(b)}`,
    `    freed at ${freedAt(b.free_frames)}${b.through_gc ? pc.yellow(' — through the garbage collector (gc)') : ''}`,
    ...allocatedAt(b),
  ];
}

function freedAt(frames: Frame[]): string {
  const f = topUserFrame(frames);
  return f ? formatFrame(f) : 'a site with no stack';
}

function allocatedAt(b: GcBurst): string[] {
  const lines = [
    '    allocated at:',
    sitesTable(
      ['bytes', 'count', 'allocated at (innermost first)'],
      b.groups.map((g) => [formatBytes(g.bytes), formatCount(g.count), framesCell(g.frames)]),
    ),
  ];
  if (b.other_groups > 0) lines.push(`    … ${plural(b.other_groups, 'more site')}`);
  return lines;
}
