import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { createGzip } from 'node:zlib';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { perfettoTrace } from '../../engine/analyses/export/perfetto.js';
import { SnapshotError } from '../../engine/errors.js';
import { plural } from '../../engine/format.js';
import { exportTables, type TableFormat } from '../export-tables.js';
import { removeIfInterrupted } from '../interrupt-cleanup.js';
import { openSnapshot } from '../open-snapshot.js';
import { EXIT_BAD_INPUT } from '../run-files.js';

type ExportFormat = TableFormat | 'perfetto';

interface ExportOptions {
  format: ExportFormat;
  output: string;
  force?: boolean;
  json?: boolean;
}

/** `memlens export`: the snapshot's tables for SQL engines (Parquet, CSV, JSON lines) or a Perfetto trace. */
export function exportCommand(program: Command): void {
  program
    .command('export')
    .description(
      'write snapshots or runs as tables (parquet, csv, jsonl: see docs/parquet-schema.md) or as a Perfetto/Chrome trace (perfetto)',
    )
    .argument('<paths...>', 'snapshot files or run directories (perfetto: one file)')
    .requiredOption(
      '-o, --output <path>',
      'output directory (tables) or trace file (perfetto: .json or .json.gz)',
    )
    .option('--format <fmt>', 'parquet, csv, jsonl or perfetto', parseFormat, 'parquet')
    .option('--force', 'replace a non-empty output directory')
    .option('--json', 'print what was written as JSON: {"output", "format", "snapshots": [...]}')
    .action(async (paths: string[], opts: ExportOptions) => {
      try {
        if (opts.format === 'perfetto') {
          await exportPerfetto(paths, opts.output);
          if (opts.json) writeJsonLine({ output: opts.output, format: opts.format, snapshots: paths });
        } else {
          const m = await exportTables(paths, opts.output, opts.format, {
            force: opts.force === true,
            progress: true,
          });
          if (opts.json) writeJsonLine({ output: opts.output, format: opts.format, snapshots: m.snapshots });
          else
            process.stderr.write(
              `memlens: ${plural(m.snapshots.length, 'snapshot')} exported to ${opts.output}\n`,
            );
        }
      } catch (e) {
        process.stderr.write(`memlens: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}\n`);
        process.exitCode = EXIT_BAD_INPUT;
      }
    });
}

function writeJsonLine(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function exportPerfetto(paths: string[], output: string): Promise<void> {
  if (paths.length !== 1) throw new SnapshotError('--format perfetto takes one snapshot file');
  const file = paths[0]!;
  const snapshot = await openSnapshot(file, { progress: true }).catch((e: unknown) => {
    throw new SnapshotError(`${file}: ${(e as Error).message}`);
  });
  const tmp = `${output}.memlens-${process.pid}.tmp`;
  const release = removeIfInterrupted(tmp);
  try {
    const out = createWriteStream(tmp);
    const gzip = output.endsWith('.gz') ? createGzip() : undefined;
    if (gzip) gzip.pipe(out);
    const sink = gzip ?? out;
    const closed = once(out, 'close');
    for (const piece of perfettoTrace(snapshot, file)) {
      if (!sink.write(piece)) await once(sink, 'drain');
    }
    sink.end();
    await closed;
    renameSync(tmp, output);
  } catch (e) {
    rmSync(tmp, { force: true });
    if (e instanceof SnapshotError) throw e;
    throw new SnapshotError(
      `cannot write ${output} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  } finally {
    release();
  }
}

function parseFormat(v: string): ExportFormat {
  if (v !== 'parquet' && v !== 'csv' && v !== 'jsonl' && v !== 'perfetto') {
    throw new InvalidArgumentError('expected parquet, csv, jsonl or perfetto');
  }
  return v;
}
