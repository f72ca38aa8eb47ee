import Table from 'cli-table3';
import type { Command } from 'commander';
import {
  type DeviceSummary,
  type SnapshotSummary,
  type SummaryRow,
  summarize,
} from '../../engine/analyses/summary/index.js';
import { formatBytes, formatCount, formatDuration, plural } from '../../engine/base/index.js';
import { pc } from '../text/colors.js';
import { type FileOptions, parseDevice, runFiles } from '../text/run-files.js';

/** `memlens summary`: the memory_summary() table and what the file says about itself. */
export function summaryCommand(program: Command): void {
  program
    .command('summary')
    .description(
      'per device: the torch.cuda.memory_summary() table, allocator settings, trace facts and warnings',
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "devices": [...]}]}')
    .action((files: string[], opts: FileOptions) =>
      runFiles(files, opts, (snapshot, devices) => {
        const summary = summarize(snapshot, devices);
        return { json: { ...summary }, text: renderSummary(summary) };
      }),
    );
}

/** The text report of `memlens summary` for one file. */
function renderSummary(s: SnapshotSummary): string {
  const out: string[] = [`  layout: ${layoutText(s)}`];
  for (const w of s.warnings) out.push(pc.yellow(`  warning: ${w}`));
  if (s.allocator_settings) out.push(`  allocator settings: ${settingsText(s.allocator_settings)}`);
  if (s.producer.kind === 'torch_npu')
    out.push(`  producer: torch_npu (Ascend NPU), from ${s.producer.signals.join('; ')}`);
  if (s.producer.pad) out.push(`  request pad: ${s.producer.pad.bytes} B (${s.producer.pad.from})`);
  for (const d of s.devices) out.push('', renderDevice(d, s.producer.kind === 'torch_npu'));
  return out.join('\n');
}

function layoutText(s: SnapshotSummary): string {
  const proto = s.pickle_protocol === null ? 'JSON' : `pickle protocol ${s.pickle_protocol}`;
  return s.layout === 'segment-list'
    ? `list of segments (memory_snapshot()), ${proto}`
    : `_dump_snapshot dict, ${proto}`;
}

function settingsText(settings: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(settings)) {
    if (k === 'roundup_power2_divisions' && typeof v === 'object' && v !== null) {
      const set = Object.entries(v).filter(([, n]) => n !== 0);
      parts.push(`${k}=${set.length === 0 ? 'off' : set.map(([a, n]) => `${a}:${String(n)}`).join(',')}`);
    } else {
      parts.push(`${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
    }
  }
  return parts.join(' ');
}

function renderDevice(d: DeviceSummary, npu: boolean): string {
  const lines = [pc.bold(d.label), renderTable(d.memory_summary)];
  const pools = Object.entries(d.pools).map(
    ([k, v]) => `${k}: ${plural(v.segments, 'segment')}, ${formatBytes(v.reserved_bytes)}`,
  );
  lines.push(
    `  segments: ${d.segments} (${pools.join('; ')})${d.expandable_segments ? `, ${d.expandable_segments} expandable` : ''}; blocks: ${formatCount(d.blocks)}`,
  );
  lines.push(
    `  largest free (inactive) block: ${formatBytes(d.largest_inactive_block)}; streams: ${d.streams.join(', ') || 'not recorded'}`,
  );
  if (d.workspace_bytes > 0)
    lines.push(
      `  workspace: ${formatBytes(d.workspace_bytes)} held by torch_npu's workspace allocator (reserved; no tensor's, and not free for tensors)`,
    );
  if (d.private_pools.length > 0) lines.push(`  private pools: ${d.private_pools.join(', ')}`);
  lines.push(`  trace: ${traceText(d, npu)}`);
  for (const n of d.notes) lines.push(pc.dim(`  note: ${n}`));
  for (const w of d.warnings) lines.push(pc.yellow(`  warning: ${w}`));
  return lines.join('\n');
}

function traceText(d: DeviceSummary, npu: boolean): string {
  if (d.trace_entries === 0) return 'no entries (memory history was not recorded for this device)';
  const actions = Object.entries(d.trace_actions).map(([a, n]) => `${a} ${formatCount(n)}`);
  const span =
    d.trace_first_time_us === null
      ? npu
        ? 'no timestamps (torch_npu records none)'
        : 'no timestamps (PyTorch < 2.2)'
      : `spans ${formatDuration(d.trace_span_us)}`;
  const oom = d.ooms > 0 ? pc.red(`, ${d.ooms} OOM`) : ', no OOM';
  return `${plural(d.trace_entries, 'entry')} (${actions.join(', ')}), ${span}${oom}; requested memory ${formatBytes(d.trace_start_allocated_bytes)} at start, peak ${formatBytes(d.trace_peak_allocated_bytes)}; reserved ${formatBytes(d.trace_start_reserved_bytes)} at start, peak ${formatBytes(d.trace_peak_reserved_bytes)}`;
}

function renderTable(rows: SummaryRow[]): string {
  const table = new Table({
    head: ['Metric', 'Cur Usage', 'Peak Usage', 'Tot Alloc', 'Tot Freed'],
    colAligns: ['left', 'right', 'right', 'right', 'right'],
    style: { head: [], border: [], compact: true },
  });
  for (const r of rows) {
    const fmt = (v: number | null): string =>
      v === null ? '—' : r.unit === 'bytes' ? formatBytes(v) : formatCount(v);
    const label = r.pool === 'all' ? r.metric : `      from ${r.pool} pool`;
    table.push([label, fmt(r.current), fmt(r.peak), fmt(r.allocated_total), fmt(r.freed_total)]);
  }
  return table.toString();
}
