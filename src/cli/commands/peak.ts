import Table from 'cli-table3';
import type { Command } from 'commander';
import { type DevicePeak, type PeakOptions, peakOf } from '../../engine/analyses/peak/index.js';
import { formatBytes, formatCount, formatDuration, plural, SnapshotError } from '../../engine/base/index.js';
import { liveMemoryProfile } from '../../engine/export/index.js';
import type { DeviceModel, Snapshot } from '../../engine/model/index.js';
import { deviceName } from '../../engine/model/index.js';
import { writeFileAtomically } from '../../node/files/write-file.js';
import { pc } from '../text/colors.js';
import { framesCell } from '../text/frames-text.js';
import { type FileOptions, parseCount, parseDevice, parseEntry, runFiles } from '../text/run-files.js';

interface PeakCliOptions extends FileOptions {
  at?: number;
  time?: number;
  top: number;
  fullStacks?: boolean;
  speedscope?: string;
}

/** `memlens peak`: what was live when allocated memory peaked, grouped by allocating code. */
export function peakCommand(program: Command): void {
  program
    .command('peak')
    .description('when allocated memory peaked in the recorded window, and which code held it then')
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option('--at <entry>', 'the state after this trace entry instead of the peak', parseEntry)
    .option('--time <us>', 'the state at this time_us (µs, as in the trace) instead of the peak', parseCount)
    .option('--top <n>', 'how many allocating sites to list', parseCount, 10)
    .option('--full-stacks', 'group by whole stacks, not only frames in your own code')
    .option(
      '--speedscope <out.json>',
      'also write the live memory as a speedscope profile (bytes as weights)',
    )
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "devices": [...]}]}')
    .action((files: string[], opts: PeakCliOptions) => {
      const peakOpts: PeakOptions = { top: opts.top, fullStacks: opts.fullStacks ?? false };
      if (opts.at !== undefined) peakOpts.at = opts.at;
      if (opts.time !== undefined) peakOpts.timeUs = opts.time;
      return runFiles(files, opts, (snapshot, devices) => {
        if (opts.speedscope) writeProfile(opts.speedscope, snapshot, devices, peakOpts, files.length);
        const peaks = devices.map((d) => ({
          peak: peakOf(snapshot, d, peakOpts),
          entries: d.trace.length,
          t0: d.trace.timeUs[0] ?? Number.NaN,
        }));
        return {
          json: { devices: peaks.map((p) => p.peak) },
          text: peaks
            .map((p) =>
              renderPeak(
                p.peak,
                deviceName(snapshot.producer, p.peak.device),
                p.entries,
                p.t0,
                opts.fullStacks ?? false,
              ),
            )
            .join('\n\n'),
        };
      });
    });
}

/** One profile per device; the first file only when several are given (say so rather than guess). */
function writeProfile(
  out: string,
  snapshot: Snapshot,
  devices: DeviceModel[],
  opts: PeakOptions,
  files: number,
): void {
  if (files > 1) throw new SnapshotError('--speedscope takes one snapshot file at a time');
  const profiles = devices.map((d) => {
    const p = peakOf(snapshot, d, { ...opts, top: 0 });
    return liveMemoryProfile(
      snapshot,
      d,
      p.after_entry,
      `${deviceName(snapshot.producer, d.device)}, ${p.moment} (after entry ${p.after_entry})`,
    );
  });
  const file = { ...profiles[0]!, profiles: profiles.flatMap((p) => p.profiles) };
  // Frames are per profile here; speedscope shares one frame table, so merge them.
  file.shared = { frames: [] };
  file.profiles = profiles.flatMap((p) => {
    const offset = file.shared.frames.length;
    // A loop, not push(...frames): a spread call overflows the stack past ~120,000 frames.
    for (const f of p.shared.frames) file.shared.frames.push(f);
    return p.profiles.map((q) => ({ ...q, samples: q.samples.map((s) => s.map((i) => i + offset)) }));
  });
  writeFileAtomically(out, JSON.stringify(file));
}

function renderPeak(p: DevicePeak, name: string, entries: number, t0: number, full: boolean): string {
  const lines = [pc.bold(name), `  ${headline(p, entries, t0)}`];
  lines.push(
    `  reserved then: ${formatBytes(p.reserved_bytes)} (peak reserved in the window: ${formatBytes(p.peak_reserved_bytes)})`,
  );
  const shown = p.groups.reduce((n, g) => n + g.bytes, 0);
  lines.push(
    `  ${plural(p.live_allocations, 'allocation')} live, ${formatBytes(shown + p.other_bytes)}; by allocating ${full ? 'stack' : 'site in your code'}:`,
  );
  lines.push(table(p));
  if (p.other_groups > 0)
    lines.push(
      `  … ${formatCount(p.other_groups)} more sites hold ${formatBytes(p.other_bytes)} (--top to list them)`,
    );
  if (p.unknown_stack_bytes > 0) {
    lines.push(
      pc.yellow(
        `  ${formatBytes(p.unknown_stack_bytes)} have no stack: allocated before recording began, or recorded without context.`,
      ),
    );
  }
  return lines.join('\n');
}

function headline(p: DevicePeak, entries: number, t0: number): string {
  const when =
    p.after_entry < 0
      ? 'before the first trace entry'
      : `after trace entry ${formatCount(p.after_entry)} of ${formatCount(entries)}`;
  const time =
    p.time_us !== null && !Number.isNaN(t0) ? ` (${formatDuration(p.time_us - t0)} into the trace)` : '';
  const what = p.moment === 'allocated peak' ? 'allocated memory peaked at' : 'allocated memory was';
  return `${what} ${pc.bold(formatBytes(p.allocated_bytes))} (requested bytes) ${when}${time}`;
}

function table(p: DevicePeak): string {
  const total = p.groups.reduce((n, g) => n + g.bytes, 0) + p.other_bytes;
  const t = new Table({
    head: ['bytes', 'share', 'count', 'allocated at (innermost first)'],
    style: { head: [], border: [], compact: true },
    colAligns: ['right', 'right', 'right', 'left'],
  });
  for (const g of p.groups) {
    const share = total > 0 ? `${((100 * g.bytes) / total).toFixed(1)}%` : '—';
    t.push([formatBytes(g.bytes), share, formatCount(g.count), framesCell(g.frames)]);
  }
  return t.toString();
}
