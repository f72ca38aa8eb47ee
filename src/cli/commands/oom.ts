import type { Command } from 'commander';
import { listName } from '../../engine/analyses/fragmentation/fragmentation.js';
import { type OomReport, oomReports } from '../../engine/analyses/oom/oom.js';
import { formatBytes, formatCount } from '../../engine/format.js';
import { pc } from '../colors.js';
import { type FileOptions, parseCount, parseDevice, runFiles } from '../run-files.js';

interface OomCliOptions extends FileOptions {
  capacity?: number;
  request?: number;
}

/** `memlens oom`: why each out-of-memory error happened, in words and arithmetic. */
export function oomCommand(program: Command): void {
  program
    .command('oom')
    .description(
      'for every oom in the trace: exhaustion, fragmentation, or memory held outside PyTorch, and what would help',
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option(
      '--capacity <bytes>',
      "the GPU's total memory in bytes (to measure memory outside PyTorch)",
      parseCount,
    )
    .option(
      '--request <bytes>',
      'with no oom in the trace: check the dump-time state against this request',
      parseCount,
    )
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "devices": [{"device", "ooms": [...]}]}]}')
    .action((files: string[], opts: OomCliOptions) =>
      runFiles(files, opts, (snapshot, devices) => {
        const per = devices.map((d) => ({
          device: d.device,
          ooms: oomReports(snapshot, d, opts.capacity, opts.request ?? 0),
        }));
        return { json: { devices: per }, text: per.map((p) => render(p.device, p.ooms)).join('\n\n') };
      }),
    );
}

function render(device: number, ooms: OomReport[]): string {
  const lines = [pc.bold(`device ${device}`)];
  if (ooms.length === 0)
    lines.push('  no oom entry in the trace (give --capacity and --request to check the dump-time state)');
  for (const r of ooms) {
    const where = r.entry < 0 ? 'dump-time state' : `oom at trace entry ${formatCount(r.entry)}`;
    lines.push(
      `  ${where}: ${pc.bold(r.verdict)}${r.exact_free_blocks ? '' : ' (free blocks estimated from the trace)'}`,
    );
    for (const e of r.explanation) lines.push(`    ${e}`);
    for (const g of r.free_lists)
      lines.push(
        `    free in the ${listName(g)} list: ${formatBytes(g.free_bytes)} in ${formatCount(g.free_blocks)} blocks, the largest ${formatBytes(g.largest_free_block)}${g.stream === r.stream ? " (the request's stream)" : ''}`,
      );
    for (const s of r.settings) lines.push(`    would help: ${s}`);
  }
  return lines.join('\n');
}
