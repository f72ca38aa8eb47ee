import type { Command } from 'commander';
import { type DeviceDiff, diffSnapshots, type MomentDiff } from '../../engine/analyses/diff.js';
import { SnapshotError } from '../../engine/errors.js';
import { formatBytes, formatCount } from '../../engine/format.js';
import type { DeviceModel, Snapshot } from '../../engine/model/snapshot.js';
import { pc } from '../colors.js';
import { framesCell, sitesTable } from '../frames-text.js';
import { indent } from '../indent.js';
import { openSnapshot } from '../open-snapshot.js';
import { EXIT_BAD_INPUT, type FileOptions, parseCount, parseDevice, reportError } from '../run-files.js';

interface DiffCliOptions extends FileOptions {
  top: number;
  fullStacks?: boolean;
}

/** `memlens diff A B`: two steps or two ranks, and the code whose live memory differs. */
export function diffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      'compare two snapshots (two steps or two ranks): totals, peaks, and live memory by allocating site',
    )
    .argument('<a>', 'first snapshot')
    .argument('<b>', 'second snapshot (differences are B − A)')
    .option('--top <n>', 'how many differing sites to list', parseCount, 10)
    .option('--full-stacks', 'match whole stacks, not only the frames in your own code')
    .option('--device <n>', 'only this device (in both files)', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file": A}, {"file": B}], "devices": [...]}')
    .action(async (a: string, b: string, opts: DiffCliOptions) => {
      const loaded = await Promise.all([load(a, opts), load(b, opts)]);
      const files = [a, b].map((file, i) => {
        const error = loaded[i]!.error;
        return error === undefined ? { file } : { file, error };
      });
      const [sa, sb] = loaded;
      if (sa!.snapshot === undefined || sb!.snapshot === undefined) {
        if (opts.json) process.stdout.write(`${JSON.stringify({ files, devices: [] }, null, 1)}\n`);
        process.exitCode = EXIT_BAD_INPUT;
        return;
      }
      const diff = diffSnapshots(sa!.snapshot, sb!.snapshot, sa!.devices, sb!.devices, {
        top: opts.top,
        fullStacks: opts.fullStacks ?? false,
      });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ files, ...diff }, null, 1)}\n`);
        return;
      }
      const text = diff.devices.map((d) => render(d)).join('\n\n');
      const unmatched = [
        ...diff.unmatched.a.map((d) => `device ${d} is only in A`),
        ...diff.unmatched.b.map((d) => `device ${d} is only in B`),
      ];
      process.stdout.write(
        `A: ${a}\nB: ${b}\n${text}${unmatched.length ? `\n${unmatched.join('\n')}` : ''}\n`,
      );
    });
}

async function load(
  file: string,
  opts: DiffCliOptions,
): Promise<{ snapshot?: Snapshot; devices: DeviceModel[]; error?: string }> {
  try {
    const snapshot = await openSnapshot(file, { progress: !opts.json });
    const devices =
      opts.device === undefined ? snapshot.devices : snapshot.devices.filter((d) => d.device === opts.device);
    if (devices.length === 0) throw new SnapshotError(`has no device ${opts.device}`);
    return { snapshot, devices };
  } catch (e) {
    reportError(file, e);
    return { devices: [], error: (e as Error).message };
  }
}

function render(d: DeviceDiff): string {
  const title =
    d.device === d.device_b ? `device ${d.device}` : `device ${d.device} (A) vs device ${d.device_b} (B)`;
  const lines = [pc.bold(title)];
  for (const e of d.explanation) lines.push(`  ${e}`);
  lines.push('', '  totals (B − A):');
  const rows = d.totals
    .filter((t) => t.a !== 0 || t.b !== 0)
    .map((t) => [fmt(t.a, t.unit), fmt(t.b, t.unit), signed(t.delta, t.unit), t.metric]);
  lines.push(indent(sitesTable(['A', 'B', 'B − A', 'figure'], rows)));
  lines.push(...renderMoment('live at dump time', d.at_dump));
  lines.push(...renderMoment("live at each file's allocated peak", d.at_peak));
  return lines.join('\n');
}

function renderMoment(title: string, m: MomentDiff): string[] {
  const head = `  ${title} (A after entry ${formatCount(m.a_after_entry)}, B after entry ${formatCount(m.b_after_entry)}): A ${formatBytes(m.a_bytes)}, B ${formatBytes(m.b_bytes)}, B − A ${signed(m.delta_bytes, 'bytes')}`;
  if (m.sites.length === 0) return ['', head, '    no site differs.'];
  const rows = m.sites.map((s) => [
    formatBytes(s.a_bytes),
    formatBytes(s.b_bytes),
    signed(s.delta_bytes, 'bytes'),
    `${formatCount(s.a_count)} / ${formatCount(s.b_count)}`,
    framesCell(s.frames),
  ]);
  const out = [
    '',
    head,
    indent(sitesTable(['A', 'B', 'B − A', 'count A / B', 'allocated at (innermost first)'], rows)),
  ];
  if (m.other_sites > 0)
    out.push(
      `    … ${formatCount(m.other_sites)} more sites differ (net ${signed(m.other_delta_bytes, 'bytes')}; --top to list them)`,
    );
  return out;
}

function fmt(n: number, unit: 'bytes' | 'count'): string {
  return unit === 'bytes' ? formatBytes(n) : formatCount(n);
}

function signed(n: number, unit: 'bytes' | 'count'): string {
  return n > 0 ? `+${fmt(n, unit)}` : fmt(n, unit);
}
