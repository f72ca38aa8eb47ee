/**
 * Writes a snapshot as torch_npu (Ascend NPU) writes it (scripts/synth/npu.ts):
 *
 *   node dist-tools/scripts/generate-npu.js --out oom_snapshot_1_20261128061500.pickle --oom state-only
 *
 * The file appears under its name only once complete.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, Option } from 'commander';
import { writeFileAtomically } from '../src/node/files/write-file.js';
import { type NpuOom, type NpuVersion, npuSnapshotBytes } from './synth/npu.js';

interface CliOptions {
  out: string;
  version: NpuVersion;
  oom: NpuOom;
  device: number;
  expandable?: boolean;
  maxEntries?: number;
}

function main(argv: string[]): void {
  const o = new Command('generate-npu')
    .requiredOption('--out <file>', 'where to write the pickle')
    .addOption(
      new Option('--version <v>', 'torch_npu version whose format to write')
        .choices(['7.2', '7.1', '6.0', '5.0'])
        .default('7.2'),
    )
    .addOption(
      new Option('--oom <kind>', 'how the dump ends')
        .choices(['none', 'allocator', 'state-only', 'cann'])
        .default('none'),
    )
    .option('--device <n>', 'device index', (v) => Number.parseInt(v, 10), 0)
    .option('--expandable', 'expandable segments (segment_map / segment_unmap, no settings written)')
    .option('--max-entries <n>', 'keep only the last N trace entries (the ring buffer)', (v) =>
      Number.parseInt(v, 10),
    )
    .parse(argv)
    .opts<CliOptions>();
  const { bytes } = npuSnapshotBytes({
    version: o.version,
    oom: o.oom,
    device: o.device,
    expandable: o.expandable ?? false,
    ...(o.maxEntries === undefined ? {} : { maxEntries: o.maxEntries }),
  });
  writeFileAtomically(o.out, bytes);
  process.stderr.write(`${o.out}: ${bytes.length} bytes (torch_npu ${o.version}, oom ${o.oom})\n`);
}

const invoked =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invoked) main(process.argv);
