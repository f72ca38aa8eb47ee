import Table from 'cli-table3';
import type { Command } from 'commander';
import { inProducerWords } from '../../engine/analyses/producer/index.js';
import { formatBytes, formatCount, SnapshotError } from '../../engine/base/index.js';
import { PickleWriter } from '../../engine/encode/index.js';
import type { Snapshot } from '../../engine/model/index.js';
import { deviceName } from '../../engine/model/index.js';
import type { Fidelity } from '../../engine/simulate/index.js';
import {
  applyConf,
  DEFAULT_TORCH_VERSION,
  type DeviceSimulation,
  defaultSettings,
  howFar,
  type ReplaySummary,
  type SimulationResult,
  simulate,
  simulatedSnapshot,
} from '../../engine/simulate/index.js';
import { writeStreamAtomically } from '../../node/files/write-file.js';
import { pc } from '../text/colors.js';
import { indent } from '../text/indent.js';
import { type FileOptions, parseBytes, parseDevice, runFiles } from '../text/run-files.js';

interface SimulateCliOptions extends FileOptions {
  set?: string;
  capacity?: number;
  sweep?: boolean;
  fidelity?: boolean;
  torchVersion: string;
  output?: string;
}

/** `memlens simulate`: the recorded requests replayed through the caching allocator, what if. */
export function simulateCommand(program: Command): void {
  program
    .command('simulate')
    .description(
      "replay the recorded requests through PyTorch's caching allocator under the recorded and other settings",
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option('--set <key:value,...>', 'allocator settings to try, PYTORCH_CUDA_ALLOC_CONF syntax')
    .option(
      '--capacity <bytes>',
      'device memory the allocator may use, e.g. 80GiB (default: from an oom entry, else unlimited)',
      parseBytes,
    )
    .option('--sweep', 'also try a standard set of settings and rank them')
    .option('--fidelity', 'show how closely the recorded settings reproduce the recorded segment events')
    .option('--torch-version <v>', 'PyTorch version whose allocator rules apply', DEFAULT_TORCH_VERSION)
    .option(
      '-o, --output <out.pickle>',
      'write the simulated run (what-if if --set, else recorded) as a snapshot',
    )
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "torch_version", "devices": [...]}]}')
    .action((files: string[], opts: SimulateCliOptions) => {
      // Bad settings are the user's input, not the file's: refuse before reading anything.
      applyConf(defaultSettings(opts.torchVersion), opts.set ?? '');
      if (opts.output !== undefined && files.length > 1)
        throw new SnapshotError('-o takes one snapshot file at a time');
      return runFiles(files, opts, (snapshot, devices) => {
        const result = simulate(snapshot, devices, {
          set: opts.set,
          capacity: opts.capacity,
          torchVersion: opts.torchVersion,
          sweep: opts.sweep ?? false,
          keepEvents: opts.output !== undefined,
        });
        if (opts.output !== undefined) writeSimulated(opts.output, snapshot, result);
        return {
          json: { torch_version: result.torch_version, devices: result.devices },
          text: result.devices
            .map((d) =>
              render(d, deviceName(snapshot.producer, d.device), opts.fidelity ?? false, (t) =>
                inProducerWords(t, snapshot.producer),
              ),
            )
            .join('\n\n'),
        };
      });
    });
}

function writeSimulated(out: string, snapshot: Snapshot, result: SimulationResult): void {
  const value = simulatedSnapshot(snapshot, result.written);
  writeStreamAtomically(out, (write) => new PickleWriter(write, { protocol: 4 }).dump(value));
}

/** `words`: the file's producer's words, applied to table cells before they are laid out. */
function render(
  d: DeviceSimulation,
  name: string,
  showFidelity: boolean,
  words: (t: string) => string,
): string {
  const lines = [
    pc.bold(name),
    `  ${formatCount(d.trace_entries)} trace entries replayed, ${capacityText(d)}`,
  ];
  const runs: [string, ReplaySummary][] = [['recorded settings', d.recorded]];
  if (d.what_if !== null) runs.push(['what if', d.what_if]);
  lines.push(runTable(runs, words));
  lines.push(
    '  fragmentation: reserved − allocated when allocated memory peaked, and when the first OOM was raised.',
  );
  if (d.sweep !== null) {
    lines.push(
      '  sweep, best first: no OOM, then the OOM that came latest; runs that got equally far by peak reserved',
      '  over the entries they completed (the recorded settings are the recorded run above):',
    );
    lines.push(sweepTable(d.sweep, words));
  }
  if (showFidelity || d.fidelity.segment_events_matched_percent < 100) lines.push(renderFidelity(d.fidelity));
  return lines.join('\n');
}

function capacityText(d: DeviceSimulation): string {
  if (d.capacity_bytes === null) return 'unlimited capacity (no oom in the trace; give --capacity)';
  const cap = `capacity ${formatBytes(d.capacity_bytes)}`;
  if (d.capacity_source === 'option') return `${cap} (--capacity)`;
  if (d.capacity_source === 'oom') return `${cap} (reserved + device_free at the oom)`;
  return `${cap}, the reserved peak recorded after entry ${formatCount(d.capacity_peak_entry)}\n  (reserved + device_free at the oom was only ${formatBytes(d.capacity_at_oom_bytes ?? 0)}: memory held outside PyTorch grew)`;
}

function fragmentation(r: ReplaySummary): string {
  const peak = `${formatBytes(r.fragmentation_at_peak_bytes)} (${r.fragmentation_at_peak_percent}%)`;
  return r.fragmentation_at_oom_bytes === null
    ? peak
    : `${peak}; at the OOM ${formatBytes(r.fragmentation_at_oom_bytes)}`;
}

function runTable(runs: [string, ReplaySummary][], words: (t: string) => string): string {
  const t = new Table({ head: ['', ...runs.map(([name]) => name)], style: { head: [], border: [] } });
  const row = (label: string, f: (r: ReplaySummary) => string): void => {
    t.push([label, ...runs.map(([, r]) => f(r))]);
  };
  row('settings', (r) => settingsCell(r.settings));
  row('got to entry', (r) => (r.oom ? pc.red(howFar(r)) : howFar(r)));
  row('peak reserved', (r) => formatBytes(r.peak_reserved_completed_bytes));
  row('peak allocated', (r) => formatBytes(r.peak_allocated_bytes));
  row('fragmentation', fragmentation);
  row(
    words('cudaMalloc / cudaFree'),
    (r) => `${formatCount(r.cuda_malloc_calls)} / ${formatCount(r.cuda_free_calls)}`,
  );
  row('OOMs', (r) => formatCount(r.ooms));
  return indent(t.toString(), '  ');
}

/** One key per line: a sweep's combined settings would widen the table past the terminal. */
function settingsCell(settings: string): string {
  return settings === '' ? '(defaults)' : settings.split(',').join(',\n');
}

/** One row per run: a sweep has too many runs for one column each. */
function sweepTable(runs: ReplaySummary[], words: (t: string) => string): string {
  const t = new Table({
    head: ['#', 'settings', 'got to entry', 'peak\nreserved', 'frag.\nat peak', words('cudaMalloc')],
    style: { head: [], border: [], compact: true },
    colAligns: ['right', 'left', 'left', 'right', 'right', 'right'],
  });
  runs.forEach((r, i) => {
    t.push([
      String(i + 1),
      settingsCell(r.settings),
      r.oom ? pc.red(howFar(r)) : howFar(r),
      formatBytes(r.peak_reserved_completed_bytes),
      `${r.fragmentation_at_peak_percent}%`,
      formatCount(r.cuda_malloc_calls),
    ]);
  });
  return indent(t.toString(), '  ');
}

function renderFidelity(f: Fidelity): string {
  const lines = [
    `  fidelity of the recorded settings: ${f.matched_segment_events}/${f.recorded_segment_events} recorded segment events reproduced (${f.segment_events_matched_percent.toFixed(1)}%, ${f.simulated_segment_events} simulated), reserved bytes off by at most ${formatBytes(f.max_reserved_deviation_bytes)}, ${f.matched_final_segments}/${f.recorded_final_segments} dump-time segments identical`,
  ];
  const m = f.first_mismatch;
  if (m !== null) {
    const ev = (e: { action: string; size_bytes: number; entry: number } | null): string =>
      e === null ? 'nothing' : `${e.action} ${formatBytes(e.size_bytes)} (entry ${e.entry})`;
    lines.push(`  first difference: recorded ${ev(m.recorded)}, simulated ${ev(m.simulated)}`);
  }
  return lines.join('\n');
}
