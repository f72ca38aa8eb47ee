import Table from 'cli-table3';
import type { Command } from 'commander';
import {
  type DeviceFragmentation,
  type FragOptions,
  type FragState,
  fragmentationOf,
  listName,
  nonReleasablePeakWords,
  SEGMENT_ALLOC_COLUMNS,
} from '../../engine/analyses/fragmentation/index.js';
import { jsonInProducerWords } from '../../engine/analyses/producer/index.js';
import { formatBytes, formatCount } from '../../engine/base/index.js';
import { deviceName } from '../../engine/model/index.js';
import { pc } from '../text/colors.js';
import { indent } from '../text/indent.js';
import { type FileOptions, parseCount, parseDevice, parseEntry, runFiles } from '../text/run-files.js';

interface FragCliOptions extends FileOptions {
  at?: number;
  top: number;
  detailed: number;
}

/** `memlens frag`: reserved memory that holds no tensor, where it sits and what it blocks. */
export function fragCommand(program: Command): void {
  program
    .command('frag')
    .description(
      'fragmentation: free blocks per pool and stream, worst segments, and the state before each segment_alloc',
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option(
      '--at <entry>',
      'also the state after this trace entry, as printed (20,047) (estimated unless nothing changed after it)',
      parseEntry,
    )
    .option('--top <n>', 'how many segments and segment_allocs to list', parseCount, 10)
    .option('--detailed <n>', 'segment_allocs whose free blocks are estimated in detail', parseCount, 100)
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "devices": [...]}]}')
    .action((files: string[], opts: FragCliOptions) => {
      const fragOpts: FragOptions = { top: opts.top, detailed: opts.detailed };
      if (opts.at !== undefined) fragOpts.at = opts.at;
      return runFiles(files, opts, (snapshot, devices) => {
        const per = devices.map((d) =>
          jsonInProducerWords(fragmentationOf(snapshot, d, fragOpts), snapshot.producer),
        );
        return {
          json: { devices: per },
          text: per.map((p) => render(p, opts.top, deviceName(snapshot.producer, p.device))).join('\n\n'),
        };
      });
    });
}

function render(f: DeviceFragmentation, top: number, name: string): string {
  const lines = [pc.bold(name)];
  lines.push(...renderState('at dump time (exact)', f.dump));
  if (f.at !== null) {
    const how = f.at.exact ? 'exact: nothing changed memory after it' : 'estimated from the trace';
    lines.push('', ...renderState(`after trace entry ${formatCount(f.at.after_entry)} (${how})`, f.at));
  }
  if (f.most_cached !== null) {
    const m = f.most_cached;
    lines.push(
      '',
      `  most reserved-but-unallocated in the window: ${formatBytes(m.reserved_minus_allocated_bytes)} after entry ${formatCount(m.after_entry)} (reserved ${formatBytes(m.reserved_bytes)}, allocated ${formatBytes(m.allocated_bytes)})`,
    );
  }
  lines.push(...renderPeak(f));
  lines.push(...renderSegmentAllocs(f, top));
  for (const n of f.notes) lines.push(pc.dim(`  note: ${n}`));
  return lines.join('\n');
}

function renderState(title: string, s: FragState): string[] {
  const lines = [`  ${pc.bold(title)}`];
  for (const e of s.explanation) lines.push(`    ${e}`);
  if (s.free_lists.length > 0) {
    const t = new Table({
      head: ['free list', 'free blocks', 'free bytes', 'largest'],
      style: { head: [], border: [], compact: true },
      colAligns: ['left', 'right', 'right', 'right'],
    });
    for (const g of s.free_lists)
      t.push([
        listName(g),
        formatCount(g.free_blocks),
        formatBytes(g.free_bytes),
        formatBytes(g.largest_free_block),
      ]);
    lines.push(indent(t.toString()));
  }
  if (s.worst_segments.length > 0) {
    lines.push('    segments with the most free space:');
    const t = new Table({
      head: ['address', 'pool', 'size', 'in use', 'free', 'gaps', 'largest gap'],
      style: { head: [], border: [], compact: true },
      colAligns: ['left', 'left', 'right', 'right', 'right', 'right', 'right'],
    });
    for (const g of s.worst_segments)
      t.push([
        `0x${g.address.toString(16)}${g.expandable ? ' (exp.)' : ''}`,
        g.private_pool === null ? g.pool : `${g.pool} ${g.private_pool}`,
        formatBytes(g.size),
        formatBytes(g.used_bytes),
        formatBytes(g.gap_bytes),
        formatCount(g.gap_count),
        formatBytes(g.max_gap),
      ]);
    lines.push(indent(t.toString()));
  }
  return lines;
}

function renderPeak(f: DeviceFragmentation): string[] {
  const p = f.non_releasable_peak;
  if (p === null) return [];
  if (p.inactive_split_bytes === 0)
    return ['', '  no non-releasable (inactive split) memory at any point of the window.'];
  return ['', `  ${nonReleasablePeakWords(p, f.curve[0]?.time_us ?? null)}`];
}

function renderSegmentAllocs(f: DeviceFragmentation, top: number): string[] {
  const n = f.segment_allocs.length;
  if (n === 0) return ['', '  no segment_alloc in the trace.'];
  const shown = [...f.segment_allocs]
    .sort((x, y) => y.reserved_minus_allocated_before_bytes - x.reserved_minus_allocated_before_bytes)
    .slice(0, top);
  const lines = [
    '',
    `  ${formatCount(n)} segment_allocs (cudaMalloc) in the trace; those with the most reserved-but-unallocated memory just before them:`,
  ];
  const t = new Table({
    head: SEGMENT_ALLOC_COLUMNS,
    style: { head: [], border: [], compact: true },
    colAligns: ['right', 'right', 'right', 'right', 'right', 'right', 'right'],
  });
  for (const m of shown) {
    const d = m.detail;
    t.push([
      formatCount(m.entry),
      `${formatBytes(m.segment_bytes)} ${m.pool}`,
      m.request_bytes === null ? '—' : formatBytes(m.request_bytes),
      formatBytes(m.reserved_before_bytes),
      formatBytes(m.reserved_minus_allocated_before_bytes),
      formatBytes(m.inactive_split_before_bytes),
      d === null
        ? '—'
        : `${formatBytes(d.same_list_free_bytes)} (${formatBytes(d.same_list_largest_free_block)})`,
    ]);
  }
  lines.push(indent(t.toString()));
  lines.push(
    pc.dim(
      '    A segment_alloc with much free memory in its own list means no single free block was large enough: that memory was fragmented.',
    ),
  );
  return lines;
}
