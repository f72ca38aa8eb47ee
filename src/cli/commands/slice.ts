import type { Command } from 'commander';
import type { SliceRequest } from '../../engine/analyses/slice/index.js';
import { type DeviceSlice, planSlice } from '../../engine/analyses/slice/index.js';
import { formatCount, plural, SnapshotError } from '../../engine/base/index.js';
import { PickleWriter } from '../../engine/encode/index.js';
import { deviceName } from '../../engine/model/index.js';
import { writeStreamAtomically } from '../../node/files/write-file.js';
import { type FileOptions, parseDevice, runFiles } from '../text/run-files.js';
import { parseRange } from './tables.js';

interface SliceCliOptions extends FileOptions {
  range?: [number, number];
  timeRange?: [number, number];
  output: string;
}

/** `memlens slice`: a smaller snapshot of a window of the trace, for sharing or for memory_viz. */
export function sliceCommand(program: Command): void {
  program
    .command('slice')
    .description('write a smaller snapshot holding a window of the trace and the allocator state at its end')
    .argument('<file>', 'snapshot file (.pickle, .json, optionally gzipped)')
    .option(
      '--range <a:b>',
      'trace entries a to b-1 of each device (half-open; either may be left out)',
      parseRange,
    )
    .option('--time-range <a:b>', 'trace entries with a <= time_us < b (µs, as in the trace)', parseRange)
    .requiredOption('-o, --output <out.pickle>', 'where to write the slice (written only once complete)')
    .option('--device <n>', 'only this device (the others get an empty trace and no segments)', parseDevice)
    .option('--json', 'print what was written as JSON: {"files": [{"file", "output", "devices": [...]}]}')
    .action((file: string, opts: SliceCliOptions) => {
      const req = requestOf(opts);
      return runFiles([file], opts, (snapshot, devices) => {
        const plan = planSlice(snapshot, devices, req);
        let bytes = 0;
        writeStreamAtomically(opts.output, (write) => {
          const writer = new PickleWriter(
            (chunk) => {
              bytes += chunk.length;
              write(chunk);
            },
            { protocol: plan.protocol },
          );
          writer.dump(plan.value);
        });
        return {
          json: { output: opts.output, output_bytes: bytes, devices: plan.devices, notes: plan.notes },
          text: render(opts.output, bytes, plan.devices, plan.notes, (n) => deviceName(snapshot.producer, n)),
        };
      });
    });
}

function requestOf(opts: SliceCliOptions): SliceRequest {
  if ((opts.range === undefined) === (opts.timeRange === undefined)) {
    throw new SnapshotError('slice needs exactly one of --range A:B and --time-range A:B');
  }
  const [from, to] = opts.range ?? opts.timeRange!;
  // parseRange leaves an open end as MAX_SAFE_INTEGER: here it means "to the end".
  return { by: opts.range ? 'entries' : 'time', from, to: to === Number.MAX_SAFE_INTEGER ? Infinity : to };
}

function render(
  output: string,
  bytes: number,
  devices: DeviceSlice[],
  notes: string[],
  name: (n: number) => string,
): string {
  const lines = [`wrote ${output} (${formatCount(bytes)} bytes)`];
  for (const d of devices) {
    lines.push(
      `  ${name(d.device)}: entries ${formatCount(d.start)}..${formatCount(Math.max(d.start, d.end - 1))} (${formatCount(d.entries)}), ${plural(d.segments, 'segment')}, ${plural(d.blocks, 'block')} at the window's end`,
    );
  }
  for (const n of notes) lines.push(`  note: ${n}`);
  return lines.join('\n');
}
