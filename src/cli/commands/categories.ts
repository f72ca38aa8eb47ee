import Table from 'cli-table3';
import { type Command, InvalidArgumentError } from 'commander';
import { categoriesOf, type DeviceCategories } from '../../engine/analyses/categories/index.js';
import { formatBytes, formatCount } from '../../engine/base/index.js';
import { deviceName } from '../../engine/model/index.js';
import { pc } from '../text/colors.js';
import { type FileOptions, parseCount, parseDevice, runFiles } from '../text/run-files.js';

interface CategoriesCliOptions extends FileOptions {
  points: number;
}

/** `memlens categories`: live bytes by kind of tensor (parameter, gradient, ...), with the rule behind each label. */
export function categoriesCommand(program: Command): void {
  program
    .command('categories')
    .description(
      'live bytes over time by category (parameter, gradient, optimizer state, activation, temporary, unknown), inferred from stacks, annotations and lifetimes',
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option(
      '--points <n>',
      'points of the JSON curve per category (each the maximum of its bucket)',
      parsePoints,
      200,
    )
    .option('--device <n>', 'only this device', parseDevice)
    .option(
      '--json',
      'print JSON: {"files": [{"file", "devices": [{"device", "categories", "rules", "curve"}]}]}',
    )
    .action((files: string[], opts: CategoriesCliOptions) =>
      runFiles(files, opts, (snapshot, devices) => {
        const per = devices.map((d) => categoriesOf(snapshot, d, opts.points));
        return {
          json: { devices: per },
          text: per.map((r) => render(r, deviceName(snapshot.producer, r.device))).join('\n\n'),
        };
      }),
    );
}

function parsePoints(v: string): number {
  const n = parseCount(v);
  if (n === 0) throw new InvalidArgumentError('expected at least 1 point');
  return n;
}

function render(r: DeviceCategories, name: string): string {
  const lines = [pc.bold(name)];
  const at =
    r.peak_after_entry < 0 ? 'before the first entry' : `after entry ${formatCount(r.peak_after_entry)}`;
  const table = new Table({
    head: ['Category', `At peak (${at})`, 'At dump', 'Max over time', 'Allocations', 'Labelled by rules'],
    style: { head: [], border: [] },
    colAligns: ['left', 'right', 'right', 'right', 'right', 'left'],
  });
  for (const c of r.categories) {
    table.push([
      c.category,
      formatBytes(c.peak_bytes),
      formatBytes(c.dump_bytes),
      formatBytes(c.max_bytes),
      formatCount(c.allocations),
      c.rules.length === 0 ? pc.dim('—') : c.rules.join(', '),
    ]);
  }
  lines.push(
    table.toString(),
    '  rules that fired (first match wins; bytes: all allocations they labelled):',
  );
  const width = Math.max(...r.rules.map((x) => x.rule.length));
  for (const rule of r.rules) {
    lines.push(
      `  ${pc.bold(rule.rule.padEnd(width))}  ${rule.category.padEnd(15)} ${formatCount(rule.allocations).padStart(9)} ${rule.allocations === 1 ? 'alloc ' : 'allocs'} ${formatBytes(rule.bytes).padStart(10)}  ${rule.says}`,
    );
  }
  return lines.join('\n');
}
